// Package agentconfig reads Backend.AI's agent.toml in the single-agent form
// and both multi-agent forms (slot-based, as Backend.AI main accepts it
// today, and BEP-1044 device-based), says which form a file uses, enforces
// the agent's rules with the agent's wording (domain/backendai.md §5), and
// changes the file safely: surgical edits that keep every other byte, an
// atomic write with a backup, a journal, and rollback.
package agentconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/model"
	toml "github.com/pelletier/go-toml/v2"
)

// Format says which shape of agent.toml a file uses.
type Format string

// Formats.
const (
	FormatSingle      Format = "single"       // no [[agents]]
	FormatSlotBased   Format = "slot-based"   // [[agents]] with cpu = N, devices = {"cuda.shares" = "2.0"}
	FormatDeviceBased Format = "device-based" // [[agents]] with cpu = ["0", ...], devices = {cuda = [...]}
)

// Allocation modes ([resource] allocation-mode).
const (
	ModeShared    = "shared"
	ModeAutoSplit = "auto-split"
	ModeManual    = "manual"
)

// Backend.AI's default scratch root, relative to the agent's working
// directory.
const defaultScratchRoot = "./scratches"

// Config is what fgtop needs from an agent.toml.
type Config struct {
	Path string
	// Hash is the sha256 of the file's bytes as loaded, to refuse an apply
	// when the file changed on disk since.
	Hash string
	Raw  []byte
	// Format is the shape of the file: single, slot-based or device-based.
	Format Format
	// AllocFormat is how allocation tables are read: FormatSlotBased or
	// FormatDeviceBased (a single-agent file has one too).
	AllocFormat Format
	// FormatGuessed is set when no allocation table tells the format (a
	// shared or auto-split file): fgtop then reads it as Backend.AI main's
	// slot-based form, the only one main loads, unless told otherwise
	// (ParseAssuming).
	FormatGuessed bool
	// Mode is [resource] allocation-mode ("shared" when unset).
	Mode            string
	AllocationOrder []string
	AffinityPolicy  string
	// Reserved amounts of [resource] (defaults 1 core, 1G, 8G); bytes for
	// mem and disk.
	ReservedCPU  model.Dec
	ReservedMem  model.Dec
	ReservedDisk model.Dec
	// MemoryAlignSize is [resource] memory-align-size in bytes (16M).
	MemoryAlignSize model.Dec
	// ScratchRoot is [container] scratch-root, as written.
	ScratchRoot string
	Agents      []AgentConfig
	// GlobalAlloc is [resource.allocations] (nil when absent). A single
	// agent's allocation is this table; [[agents]] entries without their
	// own [agents.resource] inherit it.
	GlobalAlloc *Allocation
	// Warnings are problems that do not stop fgtop from watching.
	Warnings []string
	// Problems are why the agent would refuse to load the file (from
	// Verdict: main's reasons, or the BEP-1044 draft's for a file in its
	// device-based format); Parse also returns them as an *InvalidError.
	// A file only the draft loads has none, and a DraftFormatWarning warning.
	Problems []Problem
	// Verdict is whether Backend.AI main and the BEP-1044 draft load the
	// file, with their reasons and main's warnings (unknown keys).
	Verdict *Verdict
	// Etcd is [etcd]: where the agent reads its plugins' settings.
	Etcd Etcd
	// AllowComputePlugins is [agent] allow-compute-plugins (nil when
	// unset: every installed plugin loads); BlockComputePlugins is
	// block-compute-plugins. Items are module-path prefixes.
	AllowComputePlugins []string
	BlockComputePlugins []string
}

// AgentConfig is one agent: [agent] for a single-agent file, or one
// [[agents]] entry with the global tables as defaults.
type AgentConfig struct {
	ID model.AgentID
	// IDSet is false when the file sets no id: Backend.AI then makes up
	// "agent-<uuid4>" at every start.
	IDSet bool
	// InheritedID is the [agent] id that an [[agents]] entry without its
	// own id runs under ("" when there is none). Entries sharing it are one
	// agent to the allocator (the last one counts).
	InheritedID model.AgentID
	// ScratchRoot resolved against the config's directory when relative.
	ScratchRoot string
	// Resource is [agents.resource] (or [resource.allocations] for a single
	// agent) as decoded, nil when absent.
	Resource map[string]any
	// Alloc is the agent's allocation table as typed values: its own
	// [agents.resource] ([resource.allocations] for a single agent), or the
	// inherited global table; nil when there is none.
	Alloc *Allocation
	// OwnAlloc says Alloc is the agent's own table (always true for a
	// single agent that has one).
	OwnAlloc bool
	// ServiceAddr is the agent's [agent] service-addr (an [[agents]]
	// entry's own, else the file's) as HOST:PORT, DefaultServiceAddr when
	// unset or unusable.
	ServiceAddr string
}

// Allocation is one ResourceAllocationConfig. Which fields are meaningful
// depends on the config's AllocFormat.
type Allocation struct {
	HasCPU bool
	// CPU is the device-based list of core ids (numbers become strings).
	CPU []model.DeviceID
	// CPUCount is the slot-based core count.
	CPUCount model.Dec
	HasMem   bool
	// Mem is in bytes.
	Mem model.Dec
	// Devices is the device-based device-name -> device ids.
	Devices map[model.DeviceName][]model.DeviceID
	// Slots is the slot-based slot name -> absolute amount.
	Slots map[model.SlotName]model.Dec
	// Unread are the slot-based slots declared with a value that does not
	// read (cpu = "fifteen"): their amount above is 0, which the file does
	// not say, so what shows the amounts leaves them out.
	Unread []model.SlotName
}

// Clone returns a deep copy.
func (a *Allocation) Clone() *Allocation {
	if a == nil {
		return nil
	}
	b := *a
	b.CPU = slices.Clone(a.CPU)
	b.Unread = slices.Clone(a.Unread)
	if a.Devices != nil {
		b.Devices = make(map[model.DeviceName][]model.DeviceID, len(a.Devices))
		for k, v := range a.Devices {
			b.Devices[k] = slices.Clone(v)
		}
	}
	if a.Slots != nil {
		b.Slots = make(map[model.SlotName]model.Dec, len(a.Slots))
		for k, v := range a.Slots {
			b.Slots[k] = v
		}
	}
	return &b
}

// DeviceNames returns the names in Devices, natural-sorted.
func (a *Allocation) DeviceNames() []model.DeviceName {
	if a == nil {
		return nil
	}
	names := make([]model.DeviceName, 0, len(a.Devices))
	for n := range a.Devices {
		names = append(names, n)
	}
	SortNatural(names)
	return names
}

// SlotNames returns the names in Slots, sorted.
func (a *Allocation) SlotNames() []model.SlotName {
	if a == nil {
		return nil
	}
	names := make([]model.SlotName, 0, len(a.Slots))
	for n := range a.Slots {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Clone returns a deep copy of the config (Raw is shared: it is never
// modified).
func (c *Config) Clone() *Config {
	d := *c
	d.AllocationOrder = slices.Clone(c.AllocationOrder)
	d.Warnings = slices.Clone(c.Warnings)
	d.Problems = slices.Clone(c.Problems)
	d.GlobalAlloc = c.GlobalAlloc.Clone()
	d.Agents = make([]AgentConfig, len(c.Agents))
	for i, a := range c.Agents {
		d.Agents[i] = a
		d.Agents[i].Alloc = a.Alloc.Clone()
	}
	return &d
}

// UnsetID reports whether id is the name the loader gives an agent whose
// file sets no id ("agent", "agents[1]"): Backend.AI names such an agent
// agent-<uuid4> at every start, so a record never knows it by this one.
func UnsetID(id model.AgentID) bool {
	s := string(id)
	return s == "agent" || strings.HasPrefix(s, "agents[") && strings.HasSuffix(s, "]")
}

// Agent returns the agent with id, or nil.
func (c *Config) Agent(id model.AgentID) *AgentConfig {
	for i := range c.Agents {
		if c.Agents[i].ID == id {
			return &c.Agents[i]
		}
	}
	return nil
}

// AgentIDs returns the agent ids in config order.
func (c *Config) AgentIDs() []model.AgentID {
	out := make([]model.AgentID, len(c.Agents))
	for i, a := range c.Agents {
		out[i] = a.ID
	}
	return out
}

// NamedAgentIDs are the agent ids in config order where the file names
// every one; nil where one is not set (a single-agent file without [agent]
// id: the agent makes one up, so which record is its cannot be told).
func (c *Config) NamedAgentIDs() []model.AgentID {
	for _, a := range c.Agents {
		if !a.IDSet || UnsetID(a.ID) {
			return nil
		}
	}
	return c.AgentIDs()
}

// EtcdAgentIDs are the agents whose node scope in etcd the plugins read:
// those with an id, given or inherited, each once, in config order.
func (c *Config) EtcdAgentIDs() []model.AgentID {
	var out []model.AgentID
	seen := map[model.AgentID]bool{}
	for _, a := range c.Agents {
		id := a.ID
		if !a.IDSet {
			id = a.InheritedID
		}
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// Problem is one broken rule.
type Problem struct {
	// Line is the 1-based line of the offending key, 0 when unknown.
	Line int
	// Agent is the agent concerned, "" for the whole file.
	Agent   model.AgentID
	Message string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Message)
	}
	return p.Message
}

// InvalidError lists every rule a config breaks.
type InvalidError struct {
	Path     string
	Problems []Problem
}

func (e *InvalidError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("%s: invalid agent config: %s", e.Path, e.Problems[0])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: invalid agent config (%d problems):", e.Path, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Load reads and decodes path. The Config's Path is the file's resolved
// name (ResolvePath): absolute, symlinks resolved.
func Load(path string) (*Config, error) {
	real, err := ResolvePath(path)
	if err != nil {
		return nil, fmt.Errorf("read agent config: %w", err)
	}
	raw, err := safefile.ReadFile(real, MaxConfigSize)
	if err != nil {
		return nil, fmt.Errorf("read agent config: %w", err)
	}
	return Parse(real, raw)
}

// Parse decodes raw as the agent.toml at path. A file that is not TOML, or
// whose shape fgtop cannot follow, gives a nil Config and an error. A file
// that breaks the agent's load-time rules gives the Config (with Problems
// filled in) and an *InvalidError listing every problem, so a caller that
// only watches kernels can still go on.
func Parse(path string, raw []byte) (*Config, error) {
	return ParseAssuming(path, raw, "")
}

// ParseAssuming is Parse for a file whose allocation format is known from
// elsewhere: when no allocation table tells the format (a shared or
// auto-split file reads the same in both designs), assume is used instead
// of the slot-based default (Backend.AI main's form). fgtop uses it to
// re-read a file it rendered for an explicit --format device-based.
func ParseAssuming(path string, raw []byte, assume Format) (*Config, error) {
	doc, err := decodeAgentTOML(agentText(raw))
	if err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			// The library's own words ("toml: expected ']' ...") named
			// neither what is wrong with the file nor what to do.
			return nil, fmt.Errorf("%s:%d:%d: not valid TOML: %s; Backend.AI's agent cannot load it either: fix line %d",
				path, row, col, strings.TrimPrefix(de.Error(), "toml: "), row)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sum := sha256.Sum256(raw)
	c := &Config{Path: path, Raw: raw, Hash: hex.EncodeToString(sum[:]), Format: FormatSingle, Mode: ModeShared}
	l := &loader{c: c, base: filepath.Dir(path), assume: assume}
	// Positions only improve messages; a file the index cannot follow is
	// still loaded.
	l.doc, _ = indexTOML(raw)
	if err := l.load(doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.judged(Judge(raw))
	if len(c.Problems) > 0 {
		return c, &InvalidError{Path: path, Problems: c.Problems}
	}
	return c, nil
}

type loader struct {
	c      *Config
	assume Format
	base   string
	doc    *tomlDoc
}

// problem records what the typed reading of a value ran into. Parse then
// replaces Problems with the loaders' verdict (judged): the rules
// themselves live in schema.go, one place; these calls only mark values
// the loader could not type. (Left in place for the edits branch's merge;
// they can go once it has landed.)
func (l *loader) problem(at []string, agent model.AgentID, format string, a ...any) {
	p := Problem{Agent: agent, Message: fmt.Sprintf(format, a...)}
	if l.doc != nil {
		p.Line = l.doc.lineOfPath(at)
	}
	l.c.Problems = append(l.c.Problems, p)
}

func snake(k string) string { return strings.ReplaceAll(k, "-", "_") }

func (l *loader) load(doc map[string]any) error {
	c := l.c
	c.Etcd = etcdOf(doc)
	c.AllowComputePlugins, c.BlockComputePlugins, _ = computePluginsOf(doc)
	resource := table(doc, "resource")
	l.globals(resource)
	container := table(doc, "container")
	c.ScratchRoot = defaultScratchRoot
	if s, ok := str(container, "scratch-root", "scratch_root"); ok {
		c.ScratchRoot = s
	}
	globalTbl := table(resource, "allocations")

	rawAgents, hasAgents := doc["agents"]
	if l, isList := rawAgents.([]any); isList && len(l) == 0 {
		// agents = [] is main's single-agent form, like no agents at all.
		hasAgents = false
	}
	if !hasAgents {
		ag := AgentConfig{ScratchRoot: resolvePath(l.base, c.ScratchRoot)}
		if id, ok := str(table(doc, "agent"), "id"); ok {
			ag.ID, ag.IDSet = model.AgentID(id), true
			if strings.TrimSpace(id) == "" {
				c.Warnings = append(c.Warnings, "[agent] id is empty: the manager and fgtop's record know the agent by an empty name; set one")
			}
		} else if _, given := table(doc, "agent")["id"]; !given {
			ag.ID = "agent"
			c.Warnings = append(c.Warnings, "[agent] id is not set: Backend.AI makes up agent-<uuid4> at every start; set it")
		} else {
			// Set but not a string: the loader's own error says so, and
			// "not set" beside it would contradict it.
			ag.ID = "agent"
		}
		ag.Resource = globalTbl
		ag.ServiceAddr = serviceAddr(table(doc, "agent"), nil)
		c.Agents = []AgentConfig{ag}
		c.AllocFormat, c.FormatGuessed = l.detectFormat([]map[string]any{globalTbl})
		if globalTbl != nil {
			c.GlobalAlloc = l.alloc(globalTbl, []string{"resource", "allocations"}, ag.ID, "[resource.allocations]")
			c.Agents[0].Alloc, c.Agents[0].OwnAlloc = c.GlobalAlloc, true
		}
		return nil
	}
	list, ok := rawAgents.([]any)
	if !ok {
		return fmt.Errorf("agents must be an array of tables ([[agents]]), not a table ([agents])")
	}
	c.Format = FormatDeviceBased
	if len(list) == 1 {
		l.problem([]string{arrElem("agents", 0)}, "", "[[agents]] has exactly one entry: Backend.AI rejects that; use the single-agent form")
	}
	seen := map[model.AgentID]bool{}
	tables := []map[string]any{globalTbl}
	for i, x := range list {
		entry, ok := x.(map[string]any)
		if !ok {
			return fmt.Errorf("agents[%d] is not a table", i)
		}
		ag := AgentConfig{ScratchRoot: resolvePath(l.base, c.ScratchRoot)}
		if id, ok := str(table(entry, "agent"), "id"); ok {
			ag.ID, ag.IDSet = model.AgentID(id), true
			if strings.TrimSpace(id) == "" {
				// Backend.AI takes it as it is: an agent the manager and
				// every record know by an empty name.
				c.Warnings = append(c.Warnings, fmt.Sprintf("agents[%d]'s id is empty: the manager and fgtop's record know the agent by an empty name; set one", i))
			}
		} else {
			ag.ID = model.AgentID(fmt.Sprintf("agents[%d]", i))
			if id, ok := str(table(doc, "agent"), "id"); ok {
				ag.InheritedID = model.AgentID(id)
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("agents[%d] has no [agents.agent] id: Backend.AI makes up agent-<uuid4> at every start; set it", i))
		}
		if seen[ag.ID] {
			l.problem([]string{arrElem("agents", i), "agent", "id"}, ag.ID, "duplicate agent id %q", ag.ID)
		}
		seen[ag.ID] = true
		if s, ok := str(table(entry, "container"), "scratch-root", "scratch_root"); ok {
			ag.ScratchRoot = resolvePath(l.base, s)
		}
		ag.ServiceAddr = serviceAddr(table(entry, "agent"), table(doc, "agent"))
		ag.Resource = table(entry, "resource")
		if _, present := entry["resource"]; present && ag.Resource == nil {
			l.problem([]string{arrElem("agents", i), "resource"}, ag.ID, "Agent %s: [agents.resource] must be a table", ag.ID)
		}
		tables = append(tables, ag.Resource)
		c.Agents = append(c.Agents, ag)
	}
	c.AllocFormat, c.FormatGuessed = l.detectFormat(tables)
	c.Format = c.AllocFormat
	if globalTbl != nil {
		c.GlobalAlloc = l.alloc(globalTbl, []string{"resource", "allocations"}, "", "[resource.allocations]")
	}
	for i := range c.Agents {
		ag := &c.Agents[i]
		if ag.Resource != nil {
			ag.Alloc = l.alloc(ag.Resource, []string{arrElem("agents", i), "resource"}, ag.ID, "Agent "+string(ag.ID))
			ag.OwnAlloc = true
			inherit(ag.Alloc, ag.Resource, c.GlobalAlloc)
		} else {
			ag.Alloc = c.GlobalAlloc.Clone()
		}
	}
	return nil
}

// inherit lays an agent's own allocation table over [resource.allocations]
// the way the agent merges them: keys the agent's table does not set come
// from the global table (in main only devices can, as cpu and mem are
// required in every table; the draft's cpu is optional).
func inherit(own *Allocation, t map[string]any, global *Allocation) {
	if global == nil {
		return
	}
	if _, ok := t["devices"]; !ok {
		g := global.Clone()
		own.Slots, own.Devices = g.Slots, g.Devices
	}
	if _, ok := t["cpu"]; !ok && global.HasCPU {
		own.HasCPU, own.CPU, own.CPUCount = true, slices.Clone(global.CPU), global.CPUCount
	}
}

// draftRefusedLead heads the problems of a device-based file that neither
// loader takes.
const draftRefusedLead = "Backend.AI main cannot load this file (it is in the BEP-1044 draft's device-based format), and the draft (PR #8463) refuses it too:"

// judged takes the loaders' verdict: the problems reported are the ones of
// the loader the file is written for.
func (c *Config) judged(v *Verdict) {
	c.Verdict = v
	for _, w := range v.Warnings {
		c.Warnings = append(c.Warnings, w.String())
	}
	switch {
	case v.Main:
		c.Problems = nil
	case v.Draft:
		c.Problems = nil
		c.Warnings = append(c.Warnings, DraftFormatWarning+" (it is in the device-based format of the unmerged PR #8463: cpu = [core IDs], devices = { cuda = [device IDs] }; main takes cpu = N and devices = { \"cuda.shares\" = \"2.0\" })")
	case c.AllocFormat == FormatDeviceBased && !c.FormatGuessed:
		c.Problems = append([]Problem{{Message: draftRefusedLead}},
			v.DraftErrors...)
	default:
		c.Problems = slices.Clone(v.MainErrors)
	}
}

// globals reads [resource].
func (l *loader) globals(resource map[string]any) {
	c := l.c
	at := func(k string) []string { return []string{"resource", k} }
	if v, ok := get(resource, "allocation-mode", "allocation_mode"); ok {
		m, isStr := v.(string)
		c.Mode = strings.ToLower(m)
		if !isStr {
			c.Mode = fmt.Sprint(v)
		}
	}
	switch c.Mode {
	case ModeShared, ModeAutoSplit, ModeManual:
	default:
		l.problem(at("allocation-mode"), "", "[resource] allocation-mode %q: want shared, auto-split or manual", c.Mode)
	}
	c.AffinityPolicy = "INTERLEAVED"
	if v, ok := get(resource, "affinity-policy", "affinity_policy"); ok {
		p, _ := v.(string)
		c.AffinityPolicy = strings.ToUpper(p)
		if c.AffinityPolicy != "INTERLEAVED" && c.AffinityPolicy != "PREFER_SINGLE_NODE" {
			l.problem(at("affinity-policy"), "", "[resource] affinity-policy %q: want INTERLEAVED or PREFER_SINGLE_NODE", fmt.Sprint(v))
		}
	}
	c.AllocationOrder = []string{"cuda", "rocm", "tpu", "cpu", "mem"}
	if v, ok := get(resource, "allocation-order", "allocation_order"); ok {
		if list, ok := v.([]any); ok {
			c.AllocationOrder = c.AllocationOrder[:0:0]
			for _, x := range list {
				c.AllocationOrder = append(c.AllocationOrder, fmt.Sprint(x))
			}
		} else {
			l.problem(at("allocation-order"), "", "[resource] allocation-order must be a list of device names")
		}
	}
	c.ReservedCPU = model.NewDec(1, 0)
	if v, ok := get(resource, "reserved-cpu", "reserved_cpu"); ok {
		n, err := intValue(v)
		switch {
		case err != nil:
			l.problem(at("reserved-cpu"), "", "[resource] reserved-cpu: %v", err)
		default:
			// The agent sets no lower bound: a negative reservation adds
			// to what the agents may be given.
			c.ReservedCPU = n
		}
	}
	for _, s := range []struct {
		key string
		def string
		dst *model.Dec
	}{
		{"reserved-mem", "1G", &c.ReservedMem},
		{"reserved-disk", "8G", &c.ReservedDisk},
		{"memory-align-size", "16M", &c.MemoryAlignSize},
	} {
		*s.dst, _ = model.ParseFiniteBinarySize(s.def)
		if v, ok := get(resource, s.key, snake(s.key)); ok {
			n, err := sizeValue(v)
			switch {
			case err != nil:
				l.problem(at(s.key), "", "[resource] %s: %v", s.key, err)
			default:
				*s.dst = n
			}
		}
	}
}

// shape is what one allocation table looks like.
type shape int

const (
	shapeNone shape = iota
	shapeSlot
	shapeDevice
)

// tableShape tells a device-based table (cpu = [ids], devices = {cuda =
// [ids]}) from a slot-based one (cpu = N, devices = {"cuda.shares" =
// "2.0"}).
func tableShape(t map[string]any) shape {
	if t == nil {
		return shapeNone
	}
	if v, ok := t["cpu"]; ok {
		if _, isList := v.([]any); isList {
			return shapeDevice
		}
		return shapeSlot
	}
	if d, ok := t["devices"].(map[string]any); ok {
		for k, v := range d {
			if strings.Contains(k, ".") {
				return shapeSlot
			}
			switch x := v.(type) {
			case []any:
				return shapeDevice
			case string:
				if !looksDecimal(x) {
					return shapeDevice
				}
				return shapeSlot
			case map[string]any:
				// devices = { cuda.shares = "0.5" } unquoted: a nested table,
				// which only the slot-based format means to write.
				return shapeSlot
			default:
				return shapeSlot
			}
		}
	}
	return shapeNone
}

// detectFormat picks the allocation format from the tables' shapes: any
// device-based table makes the file device-based (the slot-shaped ones then
// get the BEP's "Old ... format detected" errors); otherwise any slot-based
// table makes it slot-based; with no telling table it is the assumed format
// or, by default, main's slot-based one, and guessed.
func (l *loader) detectFormat(tables []map[string]any) (Format, bool) {
	slot := false
	for _, t := range tables {
		switch tableShape(t) {
		case shapeDevice:
			return FormatDeviceBased, false
		case shapeSlot:
			slot = true
		}
	}
	if slot {
		return FormatSlotBased, false
	}
	if l.assume == FormatDeviceBased {
		return l.assume, true
	}
	// Main's form: the one Backend.AI main loads.
	return FormatSlotBased, true
}

// looksDecimal reports whether s reads as a number ("0.5", "2", "1e3"),
// which the device-based format rejects as a slot amount.
func looksDecimal(s string) bool {
	d, err := model.ParseDec(s)
	return err == nil && !d.IsNaN()
}

// alloc types one allocation table in the config's format. who prefixes
// messages ("Agent <id>" or "[resource.allocations]").
func (l *loader) alloc(t map[string]any, at []string, agent model.AgentID, who string) *Allocation {
	if l.c.AllocFormat == FormatSlotBased {
		return l.slotAlloc(t, at, agent, who)
	}
	return l.deviceAlloc(t, at, agent, who)
}

func sub(at []string, k ...string) []string { return append(slices.Clone(at), k...) }

// deviceAlloc reads a BEP-1044 table: cpu = ["0", ...], mem = "120G",
// devices = { cuda = ["<id>", ...] }.
func (l *loader) deviceAlloc(t map[string]any, at []string, agent model.AgentID, who string) *Allocation {
	a := &Allocation{}
	if v, ok := t["cpu"]; ok {
		a.HasCPU = true
		switch x := v.(type) {
		case int64:
			l.problem(sub(at, "cpu"), agent, "%s: Old integer format detected for 'cpu'. The device-based format lists core IDs: cpu = [\"0\", \"1\", ...]", who)
		case []any:
			ids, err := idList(x)
			if err != nil {
				l.problem(sub(at, "cpu"), agent, "%s: cpu: %v", who, err)
			}
			a.CPU = ids
		default:
			l.problem(sub(at, "cpu"), agent, "%s: cpu must be a list of core IDs, not %s", who, tomlType(v))
		}
	}
	l.mem(t, a, at, agent, who)
	if v, ok := t["devices"]; ok {
		d, isTable := v.(map[string]any)
		if !isTable {
			l.problem(sub(at, "devices"), agent, "%s: devices must be a table of device name -> device IDs, not %s", who, tomlType(v))
			return a
		}
		a.Devices = map[model.DeviceName][]model.DeviceID{}
		for _, k := range sortedKeys(d) {
			v := d[k]
			if strings.Contains(k, ".") {
				l.problem(sub(at, "devices", k), agent, "%s: Old slot-based format detected: key '%s' contains '.'. The device-based format maps a device name to device IDs: devices = { cuda = [\"<id>\", ...] }", who, k)
				continue
			}
			if k == "cpu" {
				l.problem(sub(at, "devices", k), agent, "%s: 'cpu' is not allowed in devices: list cores with cpu = [\"0\", ...]", who)
				continue
			}
			switch x := v.(type) {
			case []any:
				ids, err := idList(x)
				if err != nil {
					l.problem(sub(at, "devices", k), agent, "%s: devices.%s: %v", who, k, err)
				}
				a.Devices[model.DeviceName(k)] = ids
			case string:
				if looksDecimal(x) {
					l.problem(sub(at, "devices", k), agent, "%s: Old slot-based format detected: devices.%s = %q is an amount, not device IDs. The device-based format lists device IDs: devices = { %s = [\"<id>\", ...] }", who, k, x, tomlKey(k))
					continue
				}
				a.Devices[model.DeviceName(k)] = []model.DeviceID{model.DeviceID(x)}
			case int64, float64:
				l.problem(sub(at, "devices", k), agent, "%s: Old slot-based format detected: devices.%s = %v is an amount, not device IDs. The device-based format lists device IDs: devices = { %s = [\"<id>\", ...] }", who, k, x, tomlKey(k))
			case map[string]any:
				// An unquoted dotted key (cuda.shares = ...) decodes as a
				// nested table: report it the way it was written.
				for _, k2 := range sortedKeys(x) {
					l.problem(sub(at, "devices", k), agent, "%s: Old slot-based format detected: key '%s.%s' contains '.'. The device-based format maps a device name to device IDs: devices = { %s = [\"<id>\", ...] }", who, k, k2, tomlKey(k))
				}
			default:
				l.problem(sub(at, "devices", k), agent, "%s: devices.%s must be a list of device IDs, not %s", who, k, tomlType(v))
			}
		}
	}
	return a
}

// slotAlloc reads a slot-based table: cpu = N, mem = "120G", devices =
// {"cuda.shares" = "2.0"}.
func (l *loader) slotAlloc(t map[string]any, at []string, agent model.AgentID, who string) *Allocation {
	a := &Allocation{}
	if v, ok := t["cpu"]; ok {
		a.HasCPU = true
		n, err := intValue(v)
		switch {
		case err != nil:
			a.Unread = append(a.Unread, model.SlotCPU)
			l.problem(sub(at, "cpu"), agent, "%s: cpu must be an integer core count: %v", who, err)
		case n.Sign() < 0:
			l.problem(sub(at, "cpu"), agent, "%s: cpu must not be negative", who)
		default:
			a.CPUCount = n
		}
	}
	l.mem(t, a, at, agent, who)
	if v, ok := t["devices"]; ok {
		d, isTable := v.(map[string]any)
		if !isTable {
			l.problem(sub(at, "devices"), agent, "%s: devices must be a table of slot name -> amount, not %s", who, tomlType(v))
			return a
		}
		a.Slots = map[model.SlotName]model.Dec{}
		flat := map[string]any{}
		for k, v := range d {
			if nested, ok := v.(map[string]any); ok {
				// devices = { cuda.shares = "0.5" } decodes as a nested table;
				// the agent's SlotName keys would see "cuda" -> table.
				for k2, v2 := range nested {
					l.problem(sub(at, "devices", k, k2), agent, "%s: devices key %s.%s is not quoted, so TOML reads it as a nested table; write \"%s.%s\" = %v", who, k, k2, k, k2, v2)
					// Still declared, for the same-keys rule.
					a.Slots[model.SlotName(k+"."+k2)] = model.Zero
				}
				continue
			}
			flat[k] = v
		}
		for _, k := range sortedKeys(flat) {
			n, err := decValue(flat[k])
			switch {
			case err != nil:
				a.Unread = append(a.Unread, model.SlotName(k))
				l.problem(sub(at, "devices", k), agent, "%s: devices[%q]: %v", who, k, err)
			case n.Sign() < 0:
				l.problem(sub(at, "devices", k), agent, "%s: devices[%q] must not be negative", who, k)
			}
			// Recorded even when invalid: the key is declared.
			a.Slots[model.SlotName(k)] = n
		}
	}
	return a
}

func (l *loader) mem(t map[string]any, a *Allocation, at []string, agent model.AgentID, who string) {
	v, ok := t["mem"]
	if !ok {
		return
	}
	a.HasMem = true
	n, err := sizeValue(v)
	switch {
	case err != nil:
		a.Unread = append(a.Unread, model.SlotMem)
		l.problem(sub(at, "mem"), agent, "%s: mem: %v", who, err)
	case n.Sign() < 0:
		l.problem(sub(at, "mem"), agent, "%s: mem must not be negative", who)
	default:
		a.Mem = n
	}
}

// idList turns a TOML array into device ids: strings as they are, integers
// as decimal strings (the BEP turns numbers into strings).
func idList(xs []any) ([]model.DeviceID, error) {
	out := make([]model.DeviceID, 0, len(xs))
	for _, x := range xs {
		switch v := x.(type) {
		case string:
			out = append(out, model.DeviceID(v))
		case int64:
			out = append(out, model.DeviceID(strconv.FormatInt(v, 10)))
		default:
			return out, fmt.Errorf("device IDs must be strings, not %s", tomlType(x))
		}
	}
	return out, nil
}

// intValue reads an integer count the way the agent's pydantic schema
// does (lax int): integers, true/false, integral floats (2.0) and strings
// of integers ("2", " 2 ", "2.0", "1_000").
func intValue(v any) (model.Dec, error) {
	switch x := v.(type) {
	case int64:
		return model.NewDec(x, 0), nil
	case bool, float64:
		f, err := laxInt(x)
		if err != nil {
			return model.Dec{}, err
		}
		return model.NewDec(int64(f), 0), nil
	case string:
		if s, ok := intText(laxIntRe, x); ok {
			if d, err := model.ParseDec(s); err == nil {
				return d, nil
			}
		}
		return model.Dec{}, fmt.Errorf("%q is not an integer", x)
	}
	return model.Dec{}, fmt.Errorf("want an integer, not %s", tomlType(v))
}

// sizeValue reads a BinarySize as Backend.AI main does: an integer of
// bytes (true is 1) or a size string.
func sizeValue(v any) (model.Dec, error) {
	return (&judge{schema: SchemaMain}).size(v)
}

// decValue reads a Decimal amount: a string, an integer or a float (a TOML
// float goes through its shortest decimal form, as Python's Decimal(str)
// of the value pydantic sees would).
func decValue(v any) (model.Dec, error) {
	switch x := v.(type) {
	case string:
		d, err := model.ParseDec(x)
		if err != nil || !d.IsFinite() {
			return model.Dec{}, fmt.Errorf("%q is not a decimal amount", x)
		}
		return d, nil
	case int64:
		return model.NewDec(x, 0), nil
	case float64:
		d, err := model.ParseDec(strconv.FormatFloat(x, 'g', -1, 64))
		if err != nil || !d.IsFinite() {
			return model.Dec{}, fmt.Errorf("%v is not a decimal amount", x)
		}
		return d, nil
	}
	return model.Dec{}, fmt.Errorf("want a decimal amount, not %s", tomlType(v))
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// ScratchRoots returns each agent's scratch root with its id, deduplicated
// in config order.
func (c *Config) ScratchRoots() []Root {
	var out []Root
	seen := map[string]bool{}
	for _, a := range c.Agents {
		if seen[a.ScratchRoot] {
			continue
		}
		seen[a.ScratchRoot] = true
		out = append(out, Root{Path: a.ScratchRoot, Agent: a.ID})
	}
	return out
}

// Root is a scratch root and the agent whose kernels live there.
type Root struct {
	Path  string
	Agent model.AgentID
}

func resolvePath(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

func table(m map[string]any, key string) map[string]any {
	if m == nil {
		return nil
	}
	t, _ := m[key].(map[string]any)
	return t
}

func get(m map[string]any, keys ...string) (any, bool) {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v, true
		}
	}
	return nil, false
}

func str(m map[string]any, keys ...string) (string, bool) {
	v, ok := get(m, keys...)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// SearchPaths are where Backend.AI's agent looks for agent.toml, in order.
func SearchPaths() []string {
	paths := []string{}
	if p := os.Getenv("BACKEND_CONFIG_FILE"); p != "" {
		paths = append(paths, p)
	}
	paths = append(paths, "agent.toml")
	if home, err := os.UserHomeDir(); err == nil {
		paths = append(paths, filepath.Join(home, ".config", "backend.ai", "agent.toml"))
	}
	paths = append(paths, "/etc/backend.ai/agent.toml")
	return paths
}

// Find returns the first existing agent.toml of SearchPaths, or an error
// listing every place it looked.
func Find() (string, error) {
	tried := SearchPaths()
	for _, p := range tried {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("no agent.toml found; looked in: %s", strings.Join(tried, ", "))
}
