package demo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// NodeName is the demo node's host name in snapshots.
const NodeName = "fgtop-demo"

// modeManual is the allocation mode of the embedded agent.toml.
const modeManual = "manual"

// DefaultWarmUp is how much virtual time Start simulates before it returns,
// so that the console opens on a busy node rather than an empty one.
const DefaultWarmUp = 90 * time.Second

// maxCatchUp bounds how many steps the node runs at once to catch up with
// wall time (after the machine was suspended, say); beyond it the pacing
// restarts from now instead of replaying the backlog in a burst.
const maxCatchUp = 50

// Options configure a demo node.
type Options struct {
	// Seed fixes the sequence of kernels, requests and placements.
	Seed int64
	// Speed is virtual seconds per wall-clock second (0 means 1). A step
	// takes at least a microsecond and at most a day of wall time, whatever
	// the speed.
	Speed float64
	// Dir is where the node's temporary directory is made (default
	// os.TempDir()).
	Dir string
	// WarmUp is the virtual time simulated before Start returns (0 means
	// DefaultWarmUp; negative means none).
	WarmUp time.Duration
	// Partition is the format of the demo's agent.toml: slot-based
	// (Backend.AI main's, the default) or device-based (the BEP-1044
	// draft).
	Partition agentconfig.Format
	// OnAction, if set, is called with every action in order, from the
	// node's goroutine (and from Start's, during the warm-up). It must not
	// call the Node's methods and should return quickly: the simulation
	// waits for it.
	OnAction func(Action)
}

// Node is a running demo node: a temporary directory holding its
// agent.toml, mock-accelerator.toml, the mock plugin's etcd settings, a fake
// /sys and /proc for the host, and one scratch root per agent, where
// simulated agents create and destroy kernels. Close removes it all.
type Node struct {
	// Dir is the node's temporary directory.
	Dir string
	// ConfigPath is the agent.toml (device-based, manual partition).
	ConfigPath string
	// MockTOML and MockEtcd are the mock plugin's device list and its etcd
	// settings (JSON), usable with --devices and --mock-etcd.
	MockTOML string
	MockEtcd string
	// Roots are the agents' scratch roots.
	Roots []scratch.Root
	// Seed is the seed in use.
	Seed int64

	opts     Options
	src      *inventory.MockSource
	settings *inventory.MockSettings
	// fractional and types are the inventory's mode and known slot types,
	// for writing resource.txt.
	fractional bool
	types      model.SlotTypes
	parts      []agentPart
	// inv is the inventory the agents were built over (for restarts).
	inv *inventory.Inventory
	// pendingSince is when the node first saw agent.toml give an agent
	// another partition than the one it runs (zero: none pending).
	pendingSince time.Time
	// disk is agent.toml's partition as last read (RestartStates);
	// diskReads counts the reads (tests).
	disk      *diskParts
	diskReads int

	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{}

	// mu is held by the node's goroutine while it runs steps, so that
	// Pause returns only between steps.
	mu     sync.Mutex
	sim    *sim
	paused bool
	// base and baseStep anchor the pacing: step baseStep ran at wall
	// time base.
	base     time.Time
	baseStep int64
	err      error

	closeOnce sync.Once
	closeErr  error

	// The host's GPU processes (procs.go): a fake /proc under the node's
	// directory, the process table, the owners kernels are drawn from,
	// and the device source that lists the processes.
	procRoot string
	procs    *procTable
	owners   owners
	gsrc     *gpuSource

	// health answers the agents' GET /health (health.go).
	health *healthService
}

// Start creates the demo node in a new temporary directory, simulates the
// warm-up, and starts the simulated agents. They stop when ctx is done or
// Close is called; only Close removes the files.
func Start(ctx context.Context, opts Options) (*Node, error) {
	if !(opts.Speed >= 0) || math.IsInf(opts.Speed, 0) {
		return nil, fmt.Errorf("demo: speed must be a positive number, got %v", opts.Speed)
	}
	if opts.Speed == 0 {
		opts.Speed = 1
	}
	if opts.WarmUp == 0 {
		opts.WarmUp = DefaultWarmUp
	}
	dir, err := os.MkdirTemp(opts.Dir, "fgtop-demo-*")
	if err != nil {
		return nil, fmt.Errorf("demo: make the node's directory: %w", err)
	}
	n, err := setup(ctx, dir, opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	// The warm-up runs here, before anyone watches, at full speed.
	var acts []Action
	for warm := int64(max(opts.WarmUp, 0) / Step); n.sim.step < warm; {
		if err := ctx.Err(); err != nil {
			n.health.close()
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("demo: warm-up: %w", err)
		}
		for _, a := range n.sim.advance() {
			if err := n.exec(a); err != nil {
				n.health.close()
				_ = os.RemoveAll(dir)
				return nil, err
			}
			acts = append(acts, a)
		}
		n.procs.vnow.Store(int64(n.sim.now()))
		n.report(acts)
		acts = acts[:0]
	}
	runCtx, cancel := context.WithCancel(ctx)
	n.cancel = cancel
	n.base, n.baseStep = time.Now(), n.sim.step
	go n.run(runCtx)
	return n, nil
}

// setup writes the node's files and builds its agents.
func setup(ctx context.Context, dir string, opts Options) (_ *Node, err error) {
	n := &Node{
		Dir:        dir,
		ConfigPath: filepath.Join(dir, "agent.toml"),
		MockTOML:   filepath.Join(dir, "mock-accelerator.toml"),
		MockEtcd:   filepath.Join(dir, "mock-accelerator.etcd.json"),
		Seed:       opts.Seed,
		opts:       opts,
		done:       make(chan struct{}),
		wake:       make(chan struct{}, 1),
	}
	if n.health, err = startHealth(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			n.health.close()
		}
	}()
	if err := writeMarker(dir); err != nil {
		return nil, err
	}
	cfgText, err := renderAgentTOML(filepath.Join(dir, "scratches"), opts.Partition, n.health.port)
	if err != nil {
		return nil, err
	}
	for path, data := range map[string][]byte{n.ConfigPath: cfgText, n.MockTOML: mockTOML, n.MockEtcd: mockEtcdJSON} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
	}
	hostOpts, err := writeHost(filepath.Join(dir, "host"))
	if err != nil {
		return nil, err
	}
	// Read back what was written, the way fgtop reads a real node: the demo
	// then also proves its files are valid.
	cfg, err := agentconfig.Load(n.ConfigPath)
	if err != nil {
		return nil, fmt.Errorf("demo: embedded agent.toml: %w", err)
	}
	if n.parts, err = partsFromConfig(cfg); err != nil {
		return nil, err
	}
	for _, r := range cfg.ScratchRoots() {
		if err := os.MkdirAll(r.Path, 0o755); err != nil {
			return nil, fmt.Errorf("demo: scratch root: %w", err)
		}
		n.Roots = append(n.Roots, scratch.Root{Path: r.Path, Agent: r.Agent})
	}
	if n.src, err = inventory.NewMock(n.MockTOML, n.MockEtcd, inventory.NewHost(hostOpts)); err != nil {
		return nil, fmt.Errorf("demo: embedded mock accelerator: %w", err)
	}
	n.settings = n.src.Settings()
	inv, err := n.src.Poll(ctx)
	if err != nil {
		return nil, fmt.Errorf("demo: device inventory: %w", err)
	}
	for _, is := range inv.Issues {
		if is.Severity >= model.SevWarning {
			// The embedded files and the fake host are fixed: a problem
			// here is a bug in fgtop, not in the machine.
			return nil, fmt.Errorf("demo: device inventory: %s", is)
		}
	}
	n.fractional, n.types = inv.Fractional, inv.SlotTypes
	agents, err := buildAgents(inv, n.parts)
	if err != nil {
		return nil, err
	}
	n.inv = inv
	n.sim = newSim(opts.Seed, agents, knownSlots(inv))
	n.procRoot = hostOpts.ProcRoot
	n.procs = &procTable{procs: map[uint32]*demoProc{}, byKernel: map[model.KernelID][]uint32{}, nextPID: firstPID}
	n.owners = newOwners(opts.Seed)
	n.gsrc = &gpuSource{Source: n.src, n: n, reader: inventory.NewProcessReader(n.procRoot)}
	var gpus []model.DeviceID
	for _, d := range inv.Devices {
		if d.Name == "cuda" && !d.IsMIG() {
			gpus = append(gpus, d.ID)
		}
	}
	if err := n.startForeign(gpus); err != nil {
		return nil, err
	}
	return n, nil
}

// CommandFlags are the flags that point another fgtop command (watch,
// check, plan, snapshot) at the node: its agent.toml and mock plugin
// files, and the simulated host's cores and memory, which are not the
// machine's it runs on (without them its CPU looks overcommitted). The
// agents answer GET /health at the service-addr agent.toml gives
// (health.go), so such a command finds them up.
func (n *Node) CommandFlags() []string {
	return []string{"--config", n.ConfigPath, "--devices", n.MockTOML, "--mock-etcd", n.MockEtcd,
		"--host-cpus", fmt.Sprintf("0-%d", hostCores-1), "--host-mem", fmt.Sprintf("%dg", hostMemKiB>>20)}
}

// SimulateFlags are CommandFlags for fgtop simulate, whose virtual host
// is a core count spread over NUMA nodes in equal blocks (--cpus,
// --cpu-numa) and --mem: it refuses --host-cpus and --host-mem, so the
// flags CommandFlags gives left an operator who tried them on simulate
// with a refusal. The simulated host's two NUMA nodes are such blocks.
func (n *Node) SimulateFlags() []string {
	return []string{"--config", n.ConfigPath, "--devices", n.MockTOML, "--mock-etcd", n.MockEtcd,
		"--cpus", fmt.Sprint(hostCores), "--cpu-numa", fmt.Sprint(hostNUMANodes), "--mem", fmt.Sprintf("%dg", hostMemKiB>>20)}
}

// Source returns the node's device inventory: the mock GPUs, with the
// processes running on them, and the simulated host's 32 cores and 256 GiB.
func (n *Node) Source() inventory.Source { return n.gsrc }

// EngineOptions returns engine options for watching the node: its scratch
// roots, its agents with their manual partitions, its inventory. The
// engine follows the node's agent.toml as it follows a real one, so an
// apply made in the demo's console shows there at once. The simulated
// agents are not processes on this host: no restart state is looked for.
func (n *Node) EngineOptions() engine.Options {
	opts := engine.Options{
		Roots:      append([]scratch.Root(nil), n.Roots...),
		Inventory:  n.gsrc,
		Node:       NodeName,
		Mode:       modeManual,
		ConfigPath: n.ConfigPath,
		NoProcs:    true,
		// They answer GET /health on their service-addr, as healthy
		// agents do (health.go).
		SimulatedHealth: true,
		// Each simulated agent says whether it runs the file's partition.
		RestartStates: n.RestartStates,
		RestartEvery:  time.Second,
	}
	for i := range n.parts {
		p := &n.parts[i]
		opts.Agents = append(opts.Agents, model.Agent{ID: p.id, ScratchRoot: p.root, Owns: p.owns(), Mem: p.mem})
	}
	if v, err := engine.LoadConfigView(n.ConfigPath); err == nil {
		v.Apply(&opts)
	}
	return opts
}

// Pause stops the simulated agents between two steps and returns once no
// file is being written. It is a no-op when already paused or stopped.
func (n *Node) Pause() {
	n.mu.Lock()
	n.paused = true
	n.mu.Unlock()
}

// Resume lets a paused node go on, paced from now (the pause is not caught
// up).
func (n *Node) Resume() {
	n.mu.Lock()
	if n.paused {
		n.paused = false
		n.base, n.baseStep = time.Now(), n.sim.step
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// VirtualTime returns how much virtual time the node has simulated,
// warm-up included.
func (n *Node) VirtualTime() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sim.now()
}

// Done is closed when the simulated agents stop: ctx done, Close, or an
// error (see Err).
func (n *Node) Done() <-chan struct{} { return n.done }

// Err returns the error that stopped the simulated agents, or nil.
func (n *Node) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// Close stops the simulated agents and removes the node's directory. It is
// safe to call more than once; later calls return the first result.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		if n.cancel != nil {
			n.cancel()
			<-n.done
		}
		n.health.close()
		err := os.RemoveAll(n.Dir)
		if cerr := n.src.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			n.closeErr = fmt.Errorf("demo: remove %s: %w", n.Dir, err)
		}
	})
	return n.closeErr
}

// run paces the simulation: step k runs at base + (k-baseStep)·Step/Speed.
func (n *Node) run(ctx context.Context) {
	defer close(n.done)
	// A step's wall time, kept within bounds a timer can honour.
	stepWall := time.Duration(min(max(float64(Step)/n.opts.Speed, float64(time.Microsecond)), float64(24*time.Hour)))
	timer := time.NewTimer(0)
	defer timer.Stop()
	var acts []Action
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-n.wake:
		}
		n.mu.Lock()
		if n.paused {
			n.mu.Unlock()
			continue
		}
		due := n.baseStep + int64(time.Since(n.base)/stepWall)
		if due-n.sim.step > maxCatchUp {
			n.base, n.baseStep = time.Now(), n.sim.step
			due = n.sim.step + 1
		}
		var err error
		for n.sim.step < due && err == nil && ctx.Err() == nil {
			for _, a := range n.sim.advance() {
				if err = n.exec(a); err != nil {
					break
				}
				acts = append(acts, a)
			}
		}
		n.procs.vnow.Store(int64(n.sim.now()))
		next := n.base.Add(time.Duration(n.sim.step+1-n.baseStep) * stepWall)
		if err != nil {
			n.err = err
		}
		n.mu.Unlock()
		n.report(acts)
		acts = acts[:0]
		if err != nil {
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(time.Until(next))
	}
}

// report hands actions to Options.OnAction.
func (n *Node) report(acts []Action) {
	if n.opts.OnAction == nil {
		return
	}
	for _, a := range acts {
		n.opts.OnAction(a)
	}
}

// root returns an agent's scratch root.
func (n *Node) root(agent int) string { return n.parts[agent].root }

// exec performs an action's file operations the way the agent does them.
func (n *Node) exec(a Action) error {
	k := a.k
	if k == nil {
		return nil
	}
	kdir := filepath.Join(n.root(k.agent), string(k.id))
	cfgDir := filepath.Join(kdir, "config")
	rtxt := filepath.Join(cfgDir, "resource.txt")
	n.procs.vnow.Store(int64(a.At))
	var err error
	switch a.Kind {
	case ActCreate:
		// prepare_scratch: the kernel directory, then config/ and work/.
		if err = os.MkdirAll(cfgDir, 0o755); err == nil {
			err = os.Mkdir(filepath.Join(kdir, "work"), 0o755)
		}
	case ActWrite:
		var text []byte
		if text, err = n.resourceText(k, false); err == nil {
			if err = os.WriteFile(rtxt, text, 0o644); err == nil {
				err = os.WriteFile(filepath.Join(cfgDir, "resource_base.txt"), text, 0o644)
			}
		}
	case ActWritePartial:
		var text []byte
		if text, err = n.resourceText(k, false); err == nil {
			err = os.WriteFile(rtxt, text[:cutAt(text, k.cut)], 0o644)
		}
	case ActWriteRest:
		var text []byte
		if text, err = n.resourceText(k, false); err == nil {
			if err = appendFile(rtxt, text[cutAt(text, k.cut):]); err == nil {
				err = os.WriteFile(filepath.Join(cfgDir, "resource_base.txt"), text, 0o644)
			}
		}
	case ActCID:
		var base, full []byte
		if base, err = n.resourceText(k, false); err == nil {
			if full, err = n.resourceText(k, true); err == nil {
				// The docker agent appends the line after creating the
				// container; resource_base.txt keeps the file without it.
				err = appendFile(rtxt, full[len(base):])
			}
		}
		// The kernel's record (recovery.json), then its processes start
		// in the new container.
		var rec []byte
		if err == nil {
			if rec, err = n.recordText(k); err == nil {
				err = os.WriteFile(filepath.Join(cfgDir, "recovery.json"), rec, 0o644)
			}
		}
		if err == nil {
			err = n.startProcs(k)
		}
	case ActTerminate:
		// The container stops: its processes end.
		err = n.stopProcs(k.id)
	case ActDestroy:
		if err = n.stopProcs(k.id); err == nil {
			err = os.RemoveAll(kdir)
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		// Someone removed the kernel's directory under the agent; the
		// agent would log it and go on, and so does the demo.
		return nil
	}
	if err != nil {
		return fmt.Errorf("demo: %s kernel %s: %w", a.Kind, k.id, err)
	}
	return nil
}

// cutAt is where a slow write stops: a fraction of the file, at least one
// byte in and one byte short.
func cutAt(text []byte, frac float64) int {
	i := int(frac * float64(len(text)))
	return min(max(i, 1), len(text)-1)
}

// appendFile appends data to an existing file, as the agent's
// AsyncFileWriter does in mode "a".
func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
