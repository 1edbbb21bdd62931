// Package lookup reads the names a Tab offers from what the command line
// points at: the agent ids of its agent.toml and --scratch-root values,
// the devices and slots of its device source, the accelerators of a
// history record, the files of a directory. package complete decides
// what to offer from them; this package does the reads, each of which
// answers quietly, with fewer names, when it fails: a completion has no
// place to say why.
package lookup

import (
	"context"
	"os"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/internal/complete"
)

// Timeout bounds the device lookup behind a completion: a Tab must
// answer at once, even where NVML is slow to start.
const Timeout = 2 * time.Second

// RegularFiles lists the names of dir's regular files; none when dir is
// "" or cannot be read.
func RegularFiles(dir string) []string {
	if dir == "" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out
}

// Node is what a command line names of a node: the values of --config,
// --scratch-root, --devices and --mock-etcd ("" or nil where the command
// has no such flag or it was not given).
type Node struct {
	Config            string
	Roots             []string
	Devices, MockEtcd string
	// find is agentconfig.Find, where Backend.AI looks for agent.toml
	// (a test's stand-in otherwise).
	find func() (string, error)
}

// config is the agent config n names, or the one Backend.AI finds when
// anywhere (roots are not asked for: the config is looked for even beside
// them), "" when there is none.
func (n Node) config(anywhere bool) string {
	if n.Config != "" || !anywhere {
		return n.Config
	}
	find := n.find
	if find == nil {
		find = agentconfig.Find
	}
	path, _ := find()
	return path
}

// loadConfig loads the agent config at path; nil when there is none or it
// does not load at all. Load returns the config with its problems when it
// breaks a rule: its agents and slots are still the ones to complete.
func loadConfig(path string) *agentconfig.Config {
	if path == "" {
		return nil
	}
	cfg, _ := agentconfig.Load(path)
	return cfg
}

// AgentIDs lists the agent ids of the config n names (or the one found
// where Backend.AI looks, when no scratch root is named either, as the
// commands do), plus the agents of n's scratch roots.
func (n Node) AgentIDs() []string {
	var ids []string
	if cfg := loadConfig(n.config(len(n.Roots) == 0)); cfg != nil {
		for _, a := range cfg.Agents {
			ids = append(ids, string(a.ID))
		}
	}
	return complete.Agents(ids, n.Roots)
}

// SlotNames lists cpu, mem, the slots of n's device source and those the
// config's tables name (the config found where Backend.AI looks, when n
// names none), each once.
func (n Node) SlotNames() []string {
	var slots []string
	if inv := n.poll(); inv != nil {
		for _, d := range inv.Devices {
			slots = append(slots, string(d.Slot))
		}
	}
	if cfg := loadConfig(n.config(true)); cfg != nil {
		for _, a := range cfg.Agents {
			if a.Alloc != nil {
				for s := range a.Alloc.Slots {
					slots = append(slots, string(s))
				}
			}
		}
	}
	return complete.Slots(slots)
}

// DeviceIDs lists PLUGIN:ID for every device of n's source that --move
// can move, host cores included.
func (n Node) DeviceIDs() []string {
	if inv := n.poll(); inv != nil {
		return complete.Movable(inv.Devices)
	}
	return nil
}

// poll reads n's device source once, within Timeout; nil when it cannot.
func (n Node) poll() *inventory.Inventory {
	src, err := inventory.Open(n.Devices, inventory.OpenOptions{MockEtcdPath: n.MockEtcd})
	if err != nil {
		return nil
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	inv, err := src.Poll(ctx)
	if err != nil {
		return nil
	}
	return inv
}

// Accelerators lists, as PLUGIN:ID, the accelerators of the latest state
// of the history record in dir; none when it cannot be read.
func Accelerators(dir string) []string {
	rd, err := history.OpenReader(dir)
	if err != nil {
		return nil
	}
	res, err := rd.At(time.Now())
	if err != nil {
		return nil
	}
	return complete.Accelerators(res.Snap.Devices)
}
