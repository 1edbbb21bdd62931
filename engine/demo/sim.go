package demo

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// Step is the simulator's unit of virtual time. Every decision (an arrival,
// a file written, a container stopped) happens on a step boundary, so a
// seed fixes the whole sequence no matter how fast wall time runs.
const Step = 100 * time.Millisecond

// stepsPerSecond converts the per-second rates and delays below.
const stepsPerSecond = int64(time.Second / Step)

// ActionKind says what the simulated agents (or the simulated manager) did.
type ActionKind string

// Action kinds, in the order a kernel goes through them.
const (
	// ActCreate: the agent allocated the kernel's devices and made its
	// scratch directory (config/ and work/), as prepare_scratch does; there
	// is no resource.txt yet, so fgtop shows the kernel as pending.
	ActCreate ActionKind = "create"
	// ActWrite: resource.txt (without CID), resource_base.txt and
	// environ.txt were written, as prepare_container does.
	ActWrite ActionKind = "write"
	// ActWritePartial: only the first part of resource.txt reached the disk
	// (a slow write; the agent writes the file in pieces). ActWriteRest
	// completes it. fgtop shows the torn file as an issue and converges.
	ActWritePartial ActionKind = "write-partial"
	// ActWriteRest: the rest of a partially written resource.txt.
	ActWriteRest ActionKind = "write-rest"
	// ActCID: the container was created; its id was appended to
	// resource.txt as the last line.
	ActCID ActionKind = "cid"
	// ActTerminate: the manager asked for the kernel's destruction; the
	// container is stopping and the agent still holds its resources.
	ActTerminate ActionKind = "terminate"
	// ActDestroy: the container is gone; the agent released the allocation
	// and removed the scratch directory.
	ActDestroy ActionKind = "destroy"
	// ActFail: the agent's allocator refused a kernel the manager sent
	// (typically because a terminating kernel still holds what the manager
	// already counts as free). Nothing is written.
	ActFail ActionKind = "fail"
)

// Action is one thing that happened on the demo node, at a step of virtual
// time. The exported fields describe it; Node executes the file operations.
type Action struct {
	// Step is the step number (1 for the first); At the virtual time.
	Step int64
	At   time.Duration
	Kind ActionKind
	// Agent and Kernel name who; Kernel is set for every kind.
	Agent  model.AgentID
	Kernel model.KernelID
	// Request is what the kernel asked for, in SLOTS order (create, fail).
	Request alloc.Request
	// Placement is what the agent's allocators gave it (create).
	Placement alloc.KernelAllocation
	// Err is the allocator's refusal (fail).
	Err error

	k *kernelRec
}

// String formats the action as one log line; it names no file path, so two
// runs with the same seed print the same lines.
func (a Action) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s", fmtVirtual(a.At), a.Agent, a.Kind, a.Kernel)
	switch a.Kind {
	case ActCreate:
		b.WriteString(" ")
		b.WriteString(requestString(a.Request))
		b.WriteString(" -> ")
		b.WriteString(placementString(a.Placement))
	case ActFail:
		b.WriteString(" ")
		b.WriteString(requestString(a.Request))
		b.WriteString(": ")
		b.WriteString(failure(a.Err))
	}
	return b.String()
}

// failure words an allocator error as Backend.AI logs it: the exception
// class, then its message.
func failure(err error) string {
	var ae *alloc.Error
	if !errors.As(err, &ae) {
		return err.Error()
	}
	if msg := ae.Error(); strings.HasPrefix(msg, ae.Kind()+":") {
		return msg
	}
	return ae.Kind() + ": " + ae.Error()
}

// fmtVirtual prints a virtual time as +MM:SS.s (hours when needed).
func fmtVirtual(d time.Duration) string {
	tenths := int64(d / (100 * time.Millisecond))
	s, t := tenths/10, tenths%10
	if h := s / 3600; h > 0 {
		return fmt.Sprintf("+%d:%02d:%02d.%d", h, s/60%60, s%60, t)
	}
	return fmt.Sprintf("+%02d:%02d.%d", s/60, s%60, t)
}

// requestString prints the non-zero slots of a request: "cpu=2 mem=8g
// cuda.shares=0.5".
func requestString(r alloc.Request) string {
	var parts []string
	for _, e := range r {
		if e.Amount.IsZero() {
			continue
		}
		v := e.Amount.String()
		if e.Slot == model.SlotMem {
			v = model.FormatBinarySize(e.Amount)
		}
		parts = append(parts, string(e.Slot)+"="+v)
	}
	return strings.Join(parts, " ")
}

// placementString prints an allocation compactly: "cuda.shares[…a103:0.50]
// cpu[0,1] mem[root:8g]".
func placementString(k alloc.KernelAllocation) string {
	var parts []string
	for _, d := range k {
		for _, s := range d.Alloc {
			var ds []string
			for _, sh := range s.Shares {
				switch s.Slot {
				case model.SlotCPU:
					ds = append(ds, string(sh.Device))
				case model.SlotMem:
					ds = append(ds, string(sh.Device)+":"+model.FormatBinarySize(sh.Amount))
				default:
					ds = append(ds, shortID(sh.Device)+":"+sh.Amount.String())
				}
			}
			parts = append(parts, string(s.Slot)+"["+strings.Join(ds, ",")+"]")
		}
	}
	return strings.Join(parts, " ")
}

// shortID abbreviates a GPU id to its tail ("…a103", "…a105/6/0").
func shortID(id model.DeviceID) string {
	s := string(id)
	if i := strings.IndexByte(s, '/'); i >= 4 {
		return "…" + s[i-4:]
	}
	if len(s) > 8 {
		return "…" + s[len(s)-4:]
	}
	return s
}

// kernelRec is the simulator's record of one kernel.
type kernelRec struct {
	id        model.KernelID
	agent     int
	req       alloc.Request
	placement alloc.KernelAllocation
	vfolders  []vfolder
	cid       string
	// cut is the fraction of resource.txt the first write reaches, for a
	// slow (torn) write; 0 means the file is written at once.
	cut float64
	// released is set once the manager counts the kernel's resources as
	// free (before the agent does, for a hung container).
	released bool
	// inMaps is what its agent's maps hold of it since the agent
	// restarted (nil: placement): a device the new partition does not
	// give the agent is left out.
	inMaps alloc.KernelAllocation
	// restarted says inMaps is set.
	restarted bool
}

// held is what the kernel's agent's maps hold of it.
func (k *kernelRec) held() alloc.KernelAllocation {
	if k.restarted {
		return k.inMaps
	}
	return k.placement
}

// vfolder is one virtual folder mounted into a kernel.
type vfolder struct {
	host, name string
	readOnly   bool
}

// simAgent is one agent: its allocators and what the manager believes it
// has free.
type simAgent struct {
	id   model.AgentID
	maps map[model.DeviceName]alloc.Map
	// capacity and used are the manager's view, per slot: the agent's
	// partition, and the requests of the kernels it scheduled there and has
	// not released yet.
	capacity model.ResourceSlot
	used     model.ResourceSlot
}

// eventKind is a scheduled transition of a kernel.
type eventKind int

const (
	evWrite eventKind = iota
	evWriteRest
	evCID
	evTerminate
	evDestroy
)

type event struct {
	at   int64 // step
	seq  uint64
	kind eventKind
	k    *kernelRec
}

// eventQueue orders events by step, then by the order they were scheduled.
type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// allocationOrder is the agent's [resource] allocation-order.
var allocationOrder = []model.DeviceName{"cuda", "rocm", "tpu", "cpu", "mem"}

// sim is the deterministic core of the demo: a simulated manager that sends
// kernels to agents, and agents that allocate them with Backend.AI's
// allocators and go through the steps of creating and destroying them. It
// does no I/O; Node turns its actions into files. Not safe for concurrent
// use.
type sim struct {
	rng    *rand.Rand
	step   int64
	agents []*simAgent
	// known is the node's known_slot_types in registration order: every
	// kernel's SLOTS lists its requested slots, then these with "0".
	known []model.SlotName
	// migSlots are the MIG slots some agent has, for requests.
	migSlots []model.SlotName
	// shareTotal is the node's cuda.shares capacity, for the load target.
	shareTotal model.Dec
	live       map[model.KernelID]*kernelRec
	queue      eventQueue
	seq        uint64
	stats      simStats
}

// simStats counts what happened, for tests and tuning.
type simStats struct {
	created, failed, unplaced, destroyed, torn int
}

// newSim builds the simulator over agents whose allocators are already
// built (empty), with the node's known slot types in order.
func newSim(seed int64, agents []*simAgent, known []model.SlotName) *sim {
	s := &sim{
		// PCG with a fixed second word: the seed alone decides the stream.
		rng:    rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		agents: agents,
		known:  known,
		live:   map[model.KernelID]*kernelRec{},
	}
	seen := map[model.SlotName]bool{}
	for _, a := range agents {
		s.shareTotal = s.shareTotal.Add(a.capacity[model.SlotCUDAShares])
		for _, sl := range a.capacity.Names() {
			if strings.HasSuffix(string(sl), "-mig") && !seen[sl] {
				seen[sl] = true
				s.migSlots = append(s.migSlots, sl)
			}
		}
	}
	// Names() sorts; keep the node's registration order instead, so the
	// request mix does not depend on how slot names sort.
	var ordered []model.SlotName
	for _, sl := range known {
		if seen[sl] {
			ordered = append(ordered, sl)
		}
	}
	s.migSlots = ordered
	return s
}

// now is the virtual time at the current step.
func (s *sim) now() time.Duration { return time.Duration(s.step) * Step }

func (s *sim) schedule(after int64, kind eventKind, k *kernelRec) {
	s.seq++
	heap.Push(&s.queue, event{at: s.step + after, seq: s.seq, kind: kind, k: k})
}

// advance runs one step: the transitions due now, then at most one new
// kernel. It returns what happened, in order.
func (s *sim) advance() []Action {
	s.step++
	var out []Action
	for len(s.queue) > 0 && s.queue[0].at <= s.step {
		ev := heap.Pop(&s.queue).(event)
		out = append(out, s.fire(ev))
	}
	if s.rng.Float64() < s.arrivalRate()/float64(stepsPerSecond) {
		if a, ok := s.arrive(); ok {
			out = append(out, a)
		}
	}
	return out
}

// arrivalRate is the number of new kernels per virtual second. It keeps the
// node busy but not saturated: the manager's view of cuda.shares in use is
// steered into the 50-80 % band.
func (s *sim) arrivalRate() float64 {
	if s.shareTotal.IsZero() {
		return 0.2
	}
	u := s.usedShares().Float64() / s.shareTotal.Float64()
	switch {
	case u < 0.55:
		return 0.8
	case u < 0.7:
		return 0.3
	case u < 0.8:
		return 0.1
	}
	return 0.02
}

func (s *sim) usedShares() model.Dec {
	t := model.Zero
	for _, a := range s.agents {
		t = t.Add(a.used[model.SlotCUDAShares])
	}
	return t
}

func (s *sim) action(kind ActionKind, k *kernelRec) Action {
	return Action{Step: s.step, At: s.now(), Kind: kind, Agent: s.agents[k.agent].id, Kernel: k.id, k: k}
}

// fire applies one scheduled transition.
func (s *sim) fire(ev event) Action {
	k := ev.k
	switch ev.kind {
	case evWrite:
		if k.cut > 0 {
			s.schedule(s.between(0.5, 2), evWriteRest, k)
			return s.action(ActWritePartial, k)
		}
		s.schedule(s.between(0.2, 1), evCID, k)
		return s.action(ActWrite, k)
	case evWriteRest:
		s.schedule(s.between(0.2, 1), evCID, k)
		return s.action(ActWriteRest, k)
	case evCID:
		return s.action(ActCID, k)
	case evTerminate:
		// Normally the manager counts the kernel's resources as free once
		// the agent reports the container gone. Now and then a container
		// hangs while stopping and the manager gives up waiting first:
		// until the container is gone, the manager offers the agent
		// resources its allocators still hold, and a kernel sent there in
		// between fails (ActFail), as it would on a real node.
		if s.rng.Float64() < 0.04 {
			k.released = true
			s.agents[k.agent].used = s.agents[k.agent].used.Sub(slotsOf(k.req))
			s.schedule(s.between(4, 12), evDestroy, k)
		} else {
			s.schedule(s.between(1, 3), evDestroy, k)
		}
		return s.action(ActTerminate, k)
	case evDestroy:
		a := s.agents[k.agent]
		if !k.released {
			a.used = a.used.Sub(slotsOf(k.req))
		}
		act := s.action(ActDestroy, k)
		if err := alloc.Free(a.maps, k.held()); err != nil {
			// Cannot happen: the placement came from these maps.
			act.Err = err
		}
		delete(s.live, k.id)
		s.stats.destroyed++
		return act
	}
	panic(fmt.Sprintf("demo: unknown event kind %d", ev.kind))
}

// between returns a delay of lo..hi virtual seconds, in whole steps (at
// least one).
func (s *sim) between(lo, hi float64) int64 {
	n := int64((lo + s.rng.Float64()*(hi-lo)) * float64(stepsPerSecond))
	return max(n, 1)
}

// arrive draws a new kernel, lets the manager pick an agent for it, and
// has that agent allocate it. ok is false when no agent has room in the
// manager's eyes (the session would stay pending; the demo drops it).
func (s *sim) arrive() (Action, bool) {
	w := s.draw()
	id := s.uuid()
	ai := s.pick(w.slots)
	if ai < 0 {
		s.stats.unplaced++
		return Action{}, false
	}
	a := s.agents[ai]
	k := &kernelRec{id: id, agent: ai, req: s.normalize(w.slots)}
	placement, err := alloc.Allocate(a.maps, k.req, allocationOrder, alloc.Interleaved, alloc.Options{})
	if err != nil {
		s.stats.failed++
		act := s.action(ActFail, k)
		act.Request, act.Err = k.req, err
		return act, true
	}
	k.placement = placement
	k.cid = s.hex(32)
	k.vfolders = s.vfolders()
	if s.rng.Float64() < 0.04 {
		k.cut = 0.2 + 0.6*s.rng.Float64()
		s.stats.torn++
	}
	a.used = a.used.Add(slotsOf(k.req))
	s.live[id] = k
	s.stats.created++
	// Image preparation before the file is written, then a lifetime of
	// seconds to a minute (the longest write-to-CID path is 4.5 s, so the
	// kernel is always complete before it terminates).
	s.schedule(s.between(0.3, 1.5), evWrite, k)
	var life int64
	switch r := s.rng.Float64(); {
	case r < 0.4:
		life = s.between(5, 15)
	case r < 0.8:
		life = s.between(15, 40)
	default:
		life = s.between(40, 60)
	}
	s.schedule(life, evTerminate, k)
	act := s.action(ActCreate, k)
	act.Request, act.Placement = k.req, placement
	return act, true
}

// slotsOf sums a request into a ResourceSlot.
func slotsOf(r alloc.Request) model.ResourceSlot {
	out := model.ResourceSlot{}
	for _, e := range r {
		if !e.Amount.IsZero() {
			out[e.Slot] = out[e.Slot].Add(e.Amount)
		}
	}
	return out
}

// pick is the manager's agent selection ("dispersed"): among the agents
// whose free capacity (as the manager counts it) holds every requested
// slot, the one with the most of the request's accelerator slot free (or of
// cpu, for a CPU-only kernel), then the most free cores, then config order.
// -1 means none fits.
func (s *sim) pick(want model.ResourceSlot) int {
	primary := model.SlotCPU
	for _, n := range want.Names() {
		if n.IsAccelerator() && !want[n].IsZero() {
			primary = n
		}
	}
	best := -1
	var bestFree, bestCPU model.Dec
	for i, a := range s.agents {
		fits := true
		for n, v := range want {
			if a.capacity[n].Sub(a.used[n]).Less(v) {
				fits = false
				break
			}
		}
		if !fits {
			continue
		}
		free := a.capacity[primary].Sub(a.used[primary])
		cpu := a.capacity[model.SlotCPU].Sub(a.used[model.SlotCPU])
		if best < 0 || bestFree.Less(free) || free.Equal(bestFree) && bestCPU.Less(cpu) {
			best, bestFree, bestCPU = i, free, cpu
		}
	}
	return best
}

// normalize orders a kernel's slots the way its SLOTS line lists them: the
// requested slots (cpu, mem, then the accelerator), then every other known
// slot with 0, as the agent's normalize_slots adds them. (Python adds those
// from a set, in no fixed order; the demo uses registration order so a seed
// fixes the file bytes.)
func (s *sim) normalize(want model.ResourceSlot) alloc.Request {
	var r alloc.Request
	seen := map[model.SlotName]bool{}
	for _, n := range []model.SlotName{model.SlotCPU, model.SlotMem} {
		r = append(r, alloc.SlotAmount{Slot: n, Amount: want[n]})
		seen[n] = true
	}
	for _, n := range s.known {
		if v, ok := want[n]; ok && !seen[n] {
			r = append(r, alloc.SlotAmount{Slot: n, Amount: v})
			seen[n] = true
		}
	}
	for _, n := range s.known {
		if !seen[n] {
			r = append(r, alloc.SlotAmount{Slot: n, Amount: model.Zero})
		}
	}
	return r
}

// uuid draws a version-4 UUID in canonical form: a kernel id.
func (s *sim) uuid() model.KernelID { return model.KernelID(uuidFrom(s.rng)) }

// hex draws n random bytes as lower-case hex.
func (s *sim) hex(n int) string {
	const hx = "0123456789abcdef"
	out := make([]byte, 0, 2*n)
	for i := 0; i < n; i++ {
		c := byte(s.rng.Uint32())
		out = append(out, hx[c>>4], hx[c&15])
	}
	return string(out)
}

// vfolderNames are the virtual folders users mount most.
var vfolderNames = []string{"notebooks", "llm-finetune", "datasets", "checkpoints", ".logs", "train", "eval"}

// vfolders draws zero to two mounted virtual folders.
func (s *sim) vfolders() []vfolder {
	n := s.rng.IntN(3)
	var out []vfolder
	used := map[string]bool{}
	for len(out) < n {
		name := vfolderNames[s.rng.IntN(len(vfolderNames))]
		if used[name] {
			continue
		}
		used[name] = true
		host := "/vfroot/local/" + s.hex(1) + "/" + s.hex(1) + "/" + s.hex(16)
		out = append(out, vfolder{host: host, name: name, readOnly: name == "datasets"})
	}
	return out
}
