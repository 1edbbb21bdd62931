package demo

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

// The demo node's files, embedded in the binary. agent.toml is a template:
// its scratch roots point into the demo's temporary directory.
var (
	//go:embed assets/agent.toml.tmpl
	agentTOMLTemplate string
	//go:embed assets/agent-slot.toml.tmpl
	agentSlotTOMLTemplate string
	//go:embed assets/mock-accelerator.toml
	mockTOML []byte
	//go:embed assets/mock-accelerator.etcd.json
	mockEtcdJSON []byte
)

// The simulated host: the same on every machine, so the demo (and its
// placements) do not depend on where it runs.
const (
	hostCores   = 32
	hostMemKiB  = 256 << 20 // 256 GiB, as /proc/meminfo counts it
	hostNodeCPU = "0-15"    // NUMA node 0; node 1 has the rest
	// hostNUMANodes: hostNodeCPU's half of the cores, and the rest.
	hostNUMANodes = 2
)

// exclusiveCUDA are the mock CUDA plugin's exclusive slot types.
var exclusiveCUDA = []string{"cuda.device:*-mig", "cuda.device", "cuda.shares"}

// agentTOMLData fills the agent.toml template; the strings are TOML
// strings, quoted; HealthPort is the agents' service-addr port on
// loopback (0: left to Backend.AI's default).
type agentTOMLData struct {
	ScratchBase, Root0, Root1 string
	HealthPort                int
}

// renderAgentTOML returns the demo's agent.toml in format f (slot-based,
// Backend.AI main's, unless device-based is asked for) with its scratch
// roots under scratchBase ("<base>/i-demo-numa0", ...) and the agents'
// service-addr on 127.0.0.1 at healthPort (0: Backend.AI's default).
func renderAgentTOML(scratchBase string, f agentconfig.Format, healthPort int) ([]byte, error) {
	text := agentSlotTOMLTemplate
	if f == agentconfig.FormatDeviceBased {
		text = agentTOMLTemplate
	}
	t, err := template.New("agent.toml").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("demo: agent.toml template: %w", err)
	}
	var b bytes.Buffer
	err = t.Execute(&b, agentTOMLData{
		ScratchBase: tomlString(scratchBase),
		Root0:       tomlString(filepath.Join(scratchBase, "i-demo-numa0")),
		Root1:       tomlString(filepath.Join(scratchBase, "i-demo-numa1")),
		HealthPort:  healthPort,
	})
	if err != nil {
		return nil, fmt.Errorf("demo: agent.toml template: %w", err)
	}
	return b.Bytes(), nil
}

// tomlString quotes s as a TOML basic string. A temporary directory's path
// rarely needs escapes, but a TMPDIR with a quote or a backslash must not
// break the file.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// writeHost writes a fake /sys and /proc describing the demo host under dir
// and returns the options that make inventory.Host read them.
func writeHost(dir string) (inventory.HostOptions, error) {
	sys := filepath.Join(dir, "sys")
	proc := filepath.Join(dir, "proc")
	files := map[string]string{
		filepath.Join(sys, "devices/system/cpu/online"):         fmt.Sprintf("0-%d\n", hostCores-1),
		filepath.Join(sys, "devices/system/node/node0/cpulist"): hostNodeCPU + "\n",
		filepath.Join(sys, "devices/system/node/node1/cpulist"): fmt.Sprintf("%d-%d\n", hostCores/2, hostCores-1),
		filepath.Join(proc, "meminfo"):                          fmt.Sprintf("MemTotal:       %d kB\n", hostMemKiB),
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return inventory.HostOptions{}, fmt.Errorf("demo: host tree: %w", err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return inventory.HostOptions{}, fmt.Errorf("demo: host tree: %w", err)
		}
	}
	cores := make([]int, hostCores)
	for i := range cores {
		cores[i] = i
	}
	return inventory.HostOptions{
		SysRoot:  sys,
		ProcRoot: proc,
		// The real process's affinity mask would cut the demo host down to
		// the cores of whatever machine runs it.
		Affinity: func() ([]int, error) { return slices.Clone(cores), nil },
	}, nil
}

// agentPart is one agent's manual partition, as the demo's agent.toml
// gives it: device lists (device-based, the BEP-1044 draft) or amounts
// (slot-based, Backend.AI main's).
type agentPart struct {
	id      model.AgentID
	root    string
	cpu     []model.DeviceID
	mem     model.Dec
	devices map[model.DeviceName][]model.DeviceID
	// slotBased parts are amounts: cpuCount cores and slots.
	slotBased bool
	cpuCount  model.Dec
	slots     map[model.SlotName]model.Dec
}

// same reports whether two parts give an agent the same partition.
func (p *agentPart) same(q *agentPart) bool {
	if p.slotBased != q.slotBased || !p.mem.Equal(q.mem) || !p.cpuCount.Equal(q.cpuCount) || !slices.Equal(p.cpu, q.cpu) ||
		len(p.devices) != len(q.devices) || len(p.slots) != len(q.slots) {
		return false
	}
	for n, ids := range p.devices {
		if !slices.Equal(ids, q.devices[n]) {
			return false
		}
	}
	for s, v := range p.slots {
		if w, ok := q.slots[s]; !ok || !w.Equal(v) {
			return false
		}
	}
	return true
}

// partsFromConfig reads each agent's partition from the loaded agent.toml.
func partsFromConfig(cfg *agentconfig.Config) ([]agentPart, error) {
	var out []agentPart
	for _, a := range cfg.Agents {
		if a.Alloc == nil || !a.Alloc.HasCPU || !a.Alloc.HasMem {
			return nil, fmt.Errorf("demo: agent %s has no manual cpu/mem partition in %s", a.ID, cfg.Path)
		}
		p := agentPart{id: a.ID, root: a.ScratchRoot, mem: a.Alloc.Mem}
		if cfg.AllocFormat == agentconfig.FormatSlotBased {
			p.slotBased, p.cpuCount, p.slots = true, a.Alloc.CPUCount, map[model.SlotName]model.Dec{}
			for s, v := range a.Alloc.Slots {
				p.slots[s] = v
			}
		} else {
			p.cpu, p.devices = slices.Clone(a.Alloc.CPU), a.Alloc.Devices
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("demo: %s lists no agents", cfg.Path)
	}
	return out, nil
}

// owns is the partition as model.Agent.Owns spells it: nil (every
// device) for a slot-based one.
func (p *agentPart) owns() map[model.DeviceName][]model.DeviceID {
	if p.slotBased {
		return nil
	}
	out := map[model.DeviceName][]model.DeviceID{"cpu": slices.Clone(p.cpu)}
	for name, ids := range p.devices {
		out[name] = slices.Clone(ids)
	}
	return out
}

// knownSlots is the node's known_slot_types in registration order: the
// intrinsic cpu and mem, then the accelerator plugin's main slot, then its
// MIG slots in device order (the mock appends those as it finds them).
func knownSlots(inv *inventory.Inventory) []model.SlotName {
	out := []model.SlotName{model.SlotCPU, model.SlotMem}
	main := model.SlotCUDADevice
	if inv.Fractional {
		main = model.SlotCUDAShares
	}
	out = append(out, main)
	for _, d := range inv.Devices {
		if d.Name == "cuda" && d.IsMIG() && !slices.Contains(out, d.Slot) {
			out = append(out, d.Slot)
		}
	}
	return out
}

// buildAgents gives each agent the alloc maps Backend.AI builds for a
// device-based manual partition: each plugin's map keeps only the agent's
// devices (in the plugin's order), and the memory map's single device has
// the agent's share as its capacity. It also sets the manager's view of
// each agent's capacity.
func buildAgents(inv *inventory.Inventory, parts []agentPart) ([]*simAgent, error) {
	byKey := map[model.DeviceKey]*model.Device{}
	for i := range inv.Devices {
		byKey[inv.Devices[i].Key()] = &inv.Devices[i]
	}
	var out []*simAgent
	for _, p := range parts {
		a, err := buildAgent(inv, p, byKey)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// buildAgent builds one agent's maps and the manager's view of its
// capacity. A slot-based agent gets, as in Backend.AI main, maps over
// every device of the node (it does not see the other agents' kernels)
// and reports the amounts its partition gives it.
func buildAgent(inv *inventory.Inventory, p agentPart, byKey map[model.DeviceKey]*model.Device) (*simAgent, error) {
	want := map[model.DeviceKey]bool{}
	if p.slotBased {
		for i := range inv.Devices {
			want[inv.Devices[i].Key()] = true
		}
	}
	for _, id := range p.cpu {
		want[model.DeviceKey{Name: "cpu", ID: id}] = true
	}
	for name, ids := range p.devices {
		for _, id := range ids {
			want[model.DeviceKey{Name: name, ID: id}] = true
		}
	}
	for k := range want {
		if byKey[k] == nil {
			return nil, fmt.Errorf("demo: agent %s: unknown device %s", p.id, k)
		}
	}
	perPlugin := map[model.DeviceName][]alloc.DeviceSlot{}
	var plugins []model.DeviceName
	capacity := model.ResourceSlot{}
	for i := range inv.Devices {
		d := &inv.Devices[i]
		if d.Name == "mem" || !want[d.Key()] {
			continue
		}
		if _, ok := perPlugin[d.Name]; !ok {
			plugins = append(plugins, d.Name)
		}
		perPlugin[d.Name] = append(perPlugin[d.Name], alloc.DeviceSlotFrom(d))
		capacity[d.Slot] = capacity[d.Slot].Add(d.Capacity)
	}
	maps := map[model.DeviceName]alloc.Map{}
	for _, name := range plugins {
		devs := perPlugin[name]
		switch name {
		case "cpu":
			maps[name] = alloc.NewDiscreteMap(devs, alloc.Evenly, nil)
		case "cuda":
			if inv.Fractional {
				maps[name] = alloc.NewFractionMap(devs, alloc.Evenly, inv.Quantum, exclusiveCUDA)
			} else {
				maps[name] = alloc.NewDiscreteMap(devs, alloc.Evenly, exclusiveCUDA)
			}
		default:
			maps[name] = alloc.NewDiscreteMap(devs, alloc.Evenly, nil)
		}
	}
	memCap := p.mem
	if p.slotBased {
		// The whole host's memory: only the amount reported is split.
		for i := range inv.Devices {
			if inv.Devices[i].Name == "mem" {
				memCap = inv.Devices[i].Capacity
			}
		}
	}
	maps["mem"] = alloc.NewDiscreteMap([]alloc.DeviceSlot{{
		ID: "root", Slot: model.SlotMem, SlotType: model.SlotTypeBytes, Capacity: memCap,
	}}, alloc.Fill, nil)
	capacity[model.SlotMem] = p.mem
	if p.slotBased {
		capacity = model.ResourceSlot{model.SlotCPU: p.cpuCount, model.SlotMem: p.mem}
		for s, v := range p.slots {
			capacity[s] = v
		}
	}
	if _, ok := maps["cuda"]; !ok {
		// An agent without GPUs still gets the plugin, with no devices:
		// a kernel's zero cuda slots must find a map.
		maps["cuda"] = alloc.NewFractionMap(nil, alloc.Evenly, inv.Quantum, exclusiveCUDA)
	}
	return &simAgent{id: p.id, maps: maps, capacity: capacity, used: model.ResourceSlot{}}, nil
}
