package demo

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// The simulated agents behave like real ones after an apply: an agent reads
// agent.toml only when it starts, so a changed partition waits for a
// restart ("restart pending"), after which the agent places with the new
// one. A restart rebuilds the agent's alloc maps from the file and loads
// its live kernels' allocations back into them, as Backend.AI's agent does
// from the kernels' resource.txt files.

// RestartStates says, per agent, whether the partition it runs is the one
// agent.toml on disk gives it. A file that does not load is said so on
// every agent.
func (n *Node) RestartStates() map[model.AgentID]model.Restart {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.restartStatesLocked()
}

func (n *Node) restartStatesLocked() map[model.AgentID]model.Restart {
	out := make(map[model.AgentID]model.Restart, len(n.parts))
	onDisk, err := n.partsOnDiskCached()
	for i := range n.parts {
		p := &n.parts[i]
		switch {
		case err != nil:
			out[p.id] = model.Restart{State: model.RestartUnknown, Detail: "cannot tell: " + err.Error()}
		case onDisk[p.id] == nil || !onDisk[p.id].same(p):
			out[p.id] = model.Restart{State: model.RestartPending,
				Detail: "the simulated agent runs the partition it started with; agent.toml gives it another: restart it (R in the demo's console, or demo --restart-after)"}
		default:
			out[p.id] = model.Restart{State: model.RestartCurrent}
		}
	}
	pending := false
	for _, r := range out {
		pending = pending || r.State == model.RestartPending
	}
	switch {
	case pending && n.pendingSince.IsZero():
		n.pendingSince = time.Now()
	case !pending:
		n.pendingSince = time.Time{}
	}
	return out
}

// PendingSince is when a restart became pending (zero when none is).
func (n *Node) PendingSince() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.restartStatesLocked()
	return n.pendingSince
}

// diskParts is partsOnDisk's last answer and the file it read.
type diskParts struct {
	fi    os.FileInfo
	parts map[model.AgentID]*agentPart
	err   error
}

// sameFile tells one version of a file from another without reading it:
// an edit in place changes its size or modification time, a replacement
// (fgtop's atomic apply) the file itself.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && changed(a).Equal(changed(b))
}

// racyWindow is how recent a file's last change may be, at the moment it
// is read, for that read not to be kept: a file system stamps times from a
// coarse clock (a jiffy; a second or two on some), so an edit of the same
// size landing just after the read could carry the very stamps the read
// saw (git's "racily clean" entries).
const racyWindow = 2 * time.Second

// partsOnDiskCached is partsOnDisk, read again only when agent.toml is not
// the file it read last: the engine asks every second, and parsing the
// TOML each time was the largest cost of serve --demo's idle server after
// its sessions. A read made within racyWindow of the file's last change
// is not kept.
func (n *Node) partsOnDiskCached() (map[model.AgentID]*agentPart, error) {
	fi, statErr := os.Stat(n.ConfigPath)
	if statErr == nil && n.disk != nil && sameFile(n.disk.fi, fi) {
		return n.disk.parts, n.disk.err
	}
	readAt := time.Now()
	parts, err := n.partsOnDisk()
	n.disk = nil
	if statErr == nil && readAt.Sub(latest(fi.ModTime(), changed(fi))) > racyWindow {
		n.disk = &diskParts{fi: fi, parts: parts, err: err}
	}
	return parts, err
}

// latest is the later of a and b.
func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// partsOnDisk reads the partition agent.toml gives each agent now.
func (n *Node) partsOnDisk() (map[model.AgentID]*agentPart, error) {
	n.diskReads++
	cfg, err := agentconfig.Load(n.ConfigPath)
	if err != nil {
		return nil, fmt.Errorf("agent.toml: %w", err)
	}
	if cfg.Mode != modeManual {
		return nil, fmt.Errorf("the demo's agents run a manual partition; agent.toml is in %s mode", cfg.Mode)
	}
	parts, err := partsFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	out := make(map[model.AgentID]*agentPart, len(parts))
	for i := range parts {
		out[parts[i].id] = &parts[i]
	}
	return out, nil
}

// Restart restarts the agents whose partition in agent.toml differs from
// the one they run, and returns their ids (none: nothing to restart). Each
// gets new alloc maps from the file, with its live kernels loaded back;
// an allocation on a device the new partition no longer gives the agent is
// left out of its maps (the kernel runs on until it ends).
func (n *Node) Restart() ([]model.AgentID, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	onDisk, err := n.partsOnDisk()
	if err != nil {
		return nil, fmt.Errorf("demo: restart: %w", err)
	}
	byKey := map[model.DeviceKey]*model.Device{}
	for i := range n.inv.Devices {
		byKey[n.inv.Devices[i].Key()] = &n.inv.Devices[i]
	}
	var done []model.AgentID
	for i := range n.parts {
		next := onDisk[n.parts[i].id]
		if next == nil || next.same(&n.parts[i]) {
			continue
		}
		p := *next
		p.root = n.parts[i].root // the scratch root is where its kernels are
		a, err := buildAgent(n.inv, p, byKey)
		if err != nil {
			return done, fmt.Errorf("demo: restart %s: %w", p.id, err)
		}
		old := n.sim.agents[i]
		a.used = old.used
		for _, k := range n.sim.live {
			if k.agent == i {
				k.inMaps, k.restarted = loadInto(a.maps, k.held()), true
			}
		}
		n.sim.agents[i] = a
		n.parts[i] = p
		done = append(done, p.id)
	}
	n.restartStatesLocked()
	return done, nil
}

// loadInto applies what it can of a kernel's allocation to maps, device by
// device, and returns what it applied.
func loadInto(maps map[model.DeviceName]alloc.Map, k alloc.KernelAllocation) alloc.KernelAllocation {
	var out alloc.KernelAllocation
	for _, d := range k {
		m := maps[d.Device]
		if m == nil {
			continue
		}
		var kept alloc.Allocation
		for _, s := range d.Alloc {
			ss := alloc.SlotShares{Slot: s.Slot}
			for _, sh := range s.Shares {
				one := alloc.Allocation{{Slot: s.Slot, Shares: []alloc.Share{sh}}}
				if err := m.Apply(one); err == nil {
					ss.Shares = append(ss.Shares, sh)
				}
			}
			if len(ss.Shares) > 0 {
				kept = append(kept, ss)
			}
		}
		if len(kept) > 0 {
			out = append(out, alloc.DeviceAllocation{Device: d.Device, Alloc: kept})
		}
	}
	return out
}

// RestartedText says what Restart did, for a flash or a log line.
func RestartedText(ids []model.AgentID) string {
	if len(ids) == 0 {
		return "no agent's partition changed: nothing to restart"
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = string(id)
	}
	slices.Sort(names)
	return "restarted " + strings.Join(names, ", ") + ": they place with the partition in agent.toml now"
}
