package placement

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// DeviceSpec is one device of a device list file: the shape of the
// "devices" entries of the parity corpus (alloc-cases.json), plus an
// optional slot type.
//
//	{"id": "GPU-…", "slot_name": "cuda.shares", "capacity": "1.0", "numa_node": 0}
//
// capacity is a decimal, preferably a string so that its exponent is kept
// ("1.0" and "1.00" print differently); numa_node is an integer ≥ 0 or null
// (unknown; null equals null for affinity). slot_type defaults to the
// slot's usual type (count; unique for "*-mig"; bytes for mem).
type DeviceSpec struct {
	ID       string      `json:"id"`
	SlotName string      `json:"slot_name"`
	Capacity json.Number `json:"capacity"`
	NUMANode *int        `json:"numa_node"`
	SlotType string      `json:"slot_type,omitempty"`
}

// ParseDeviceSpecs reads a device list: a JSON array of DeviceSpec, or an
// object with a "devices" array (such as one case of the corpus; its other
// keys are ignored here).
func ParseDeviceSpecs(data []byte) ([]model.Device, error) {
	data = bytes.TrimSpace(data)
	var specs []DeviceSpec
	if len(data) > 0 && data[0] == '{' {
		var wrap struct {
			Devices *[]DeviceSpec `json:"devices"`
		}
		if err := decodeJSON(data, &wrap); err != nil {
			return nil, err
		}
		if wrap.Devices == nil {
			return nil, fmt.Errorf("a JSON object needs a \"devices\" list")
		}
		specs = *wrap.Devices
	} else if err := decodeJSON(data, &specs); err != nil {
		return nil, err
	}
	return DevicesFromSpecs(specs, "")
}

// DevicesFromSpecs turns device specs into model devices, in order.
// slotType, when set, is the type of every device without its own.
func DevicesFromSpecs(specs []DeviceSpec, slotType string) ([]model.Device, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("no devices")
	}
	out := make([]model.Device, 0, len(specs))
	for i, s := range specs {
		where := fmt.Sprintf("device #%d (%q)", i+1, s.ID)
		if s.ID == "" {
			return nil, fmt.Errorf("%s: no id", where)
		}
		slot := model.SlotName(s.SlotName)
		if slot == "" || slot.DeviceName() == "" {
			return nil, fmt.Errorf("%s: slot_name %q: want e.g. cuda.shares, cuda.device or cpu", where, s.SlotName)
		}
		if s.Capacity == "" {
			return nil, fmt.Errorf("%s: no capacity", where)
		}
		capacity, err := model.ParseDec(string(s.Capacity))
		if err != nil || !capacity.IsFinite() || capacity.Sign() < 0 {
			return nil, fmt.Errorf("%s: capacity %q: want a finite decimal ≥ 0", where, s.Capacity)
		}
		numa := -1
		if s.NUMANode != nil {
			if *s.NUMANode < 0 {
				return nil, fmt.Errorf("%s: numa_node %d: want an integer ≥ 0 or null", where, *s.NUMANode)
			}
			numa = *s.NUMANode
		}
		typ := model.SlotType(s.SlotType)
		if typ == "" {
			typ = model.SlotType(slotType)
		}
		if typ == "" {
			typ = model.DefaultSlotTypes().TypeOf(slot)
		}
		switch typ {
		case model.SlotTypeCount, model.SlotTypeBytes, model.SlotTypeUnique:
		default:
			return nil, fmt.Errorf("%s: slot_type %q: want count, bytes or unique", where, typ)
		}
		out = append(out, model.Device{
			ID: model.DeviceID(s.ID), Name: slot.DeviceName(), Slot: slot, SlotType: typ,
			Capacity: capacity, Index: i, NUMANode: numa,
		})
	}
	return out, nil
}

// decodeJSON decodes one JSON value, keeping numbers exact and refusing
// trailing data.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("invalid JSON: data after the first value")
	}
	return nil
}

// orderedRequest is a JSON object of slot → amount that keeps its key
// order (a Python dict's order decides which slot is allocated first).
type orderedRequest alloc.Request

func (r *orderedRequest) UnmarshalJSON(b []byte) error {
	kvs, err := decodeRawRequest(b)
	if err != nil {
		return err
	}
	var out alloc.Request
	for _, kv := range kvs {
		amt, err := model.ParseDec(kv[1])
		if err != nil {
			return fmt.Errorf("request %s=%q: %w", kv[0], kv[1], err)
		}
		out = append(out, alloc.SlotAmount{Slot: model.SlotName(kv[0]), Amount: amt})
	}
	*r = orderedRequest(out)
	return nil
}

// decodeRawRequest reads a JSON object of slot → amount (a string, or a
// number kept as written) in key order; null is an empty request.
func decodeRawRequest(b []byte) ([][2]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("a request must be a JSON object of slot → amount")
	}
	var out [][2]string
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		vt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch v := vt.(type) {
		case string:
			out = append(out, [2]string{kt.(string), v})
		case json.Number:
			out = append(out, [2]string{kt.(string), v.String()})
		default:
			return nil, fmt.Errorf("request %s: want a decimal string", kt)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the request object")
	}
	return out, nil
}

// Case is one scenario in the parity corpus's format
// (testdata/fixtures/README.md): a device set, the allocator settings, and
// a sequence of allocate and free operations, each with the result
// Backend.AI's own code produced.
type Case struct {
	ID             string       `json:"id"`
	Description    string       `json:"description"`
	MapClass       string       `json:"map_class"`
	DeviceName     string       `json:"device_name"`
	SlotName       string       `json:"slot_name"`
	SlotType       string       `json:"slot_type"`
	Strategy       string       `json:"strategy"`
	QuantumSize    *string      `json:"quantum_size"`
	AffinityPolicy string       `json:"affinity_policy"`
	AllowFrag      *bool        `json:"allow_resource_fragmentation"`
	Devices        []DeviceSpec `json:"devices"`
	Operations     []CaseOp     `json:"operations"`
}

// CaseOp is one operation of a Case.
type CaseOp struct {
	Op       string         `json:"op"` // "allocate" or "free"
	Kernel   string         `json:"kernel"`
	Request  orderedRequest `json:"request"`
	Expected *CaseExpected  `json:"expected"`
}

// CaseExpected is the recorded result of an operation.
type CaseExpected struct {
	OK           bool           `json:"ok"`
	Allocation   OrderedAmounts `json:"allocation"`
	StateAfter   OrderedAmounts `json:"state_after"`
	Error        string         `json:"error"`
	ErrorMessage string         `json:"error_message"`
}

// OrderedAmounts is a {slot: {device: "amount"}} JSON object with its key
// order kept, as an Allocation of exact decimals.
type OrderedAmounts struct {
	Alloc alloc.Allocation
	Set   bool
}

// UnmarshalJSON reads the nested object in order.
func (o *OrderedAmounts) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*o = OrderedAmounts{}
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("want a {slot: {device: amount}} object")
	}
	out := OrderedAmounts{Alloc: alloc.Allocation{}, Set: true}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		ss := alloc.SlotShares{Slot: model.SlotName(kt.(string))}
		if tok, err := dec.Token(); err != nil {
			return err
		} else if d, ok := tok.(json.Delim); !ok || d != '{' {
			return fmt.Errorf("%s: want a {device: amount} object", kt)
		}
		for dec.More() {
			dt, err := dec.Token()
			if err != nil {
				return err
			}
			vt, err := dec.Token()
			if err != nil {
				return err
			}
			v, ok := vt.(string)
			if !ok {
				return fmt.Errorf("%s/%s: want a decimal string", kt, dt)
			}
			amt, err := model.ParseDec(v)
			if err != nil {
				return fmt.Errorf("%s/%s: %w", kt, dt, err)
			}
			ss.Shares = append(ss.Shares, alloc.Share{Device: model.DeviceID(dt.(string)), Amount: amt})
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		out.Alloc = append(out.Alloc, ss)
	}
	*o = out
	return nil
}

// ParseCases reads one case (a JSON object) or a list of cases.
func ParseCases(data []byte) ([]Case, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var c Case
		if err := decodeJSON(data, &c); err != nil {
			return nil, err
		}
		return []Case{c}, nil
	}
	var cs []Case
	if err := decodeJSON(data, &cs); err != nil {
		return nil, err
	}
	return cs, nil
}

// Setup turns a case into what a simulation needs: its devices, its
// settings (allocation order [device_name], as the corpus runs it) and its
// operations as steps (a free of kernel kN becomes free=N, N counting the
// allocate operations).
func (c *Case) Setup() ([]model.Device, Settings, []Step, error) {
	var s Settings
	devs, err := DevicesFromSpecs(c.Devices, c.SlotType)
	if err != nil {
		return nil, s, nil, fmt.Errorf("case %s: %w", c.ID, err)
	}
	name := model.DeviceName(c.DeviceName)
	if name == "" {
		name = devs[0].Name
	}
	s.Order = []model.DeviceName{name}
	if c.Strategy != "" {
		if s.Strategy, err = alloc.ParseStrategy(c.Strategy); err != nil {
			return nil, s, nil, fmt.Errorf("case %s: %w", c.ID, err)
		}
	}
	s.PluginStrategy = map[model.DeviceName]alloc.Strategy{name: s.Strategy}
	if c.AffinityPolicy != "" {
		if s.Policy, err = alloc.ParseAffinityPolicy(c.AffinityPolicy); err != nil {
			return nil, s, nil, fmt.Errorf("case %s: %w", c.ID, err)
		}
	}
	switch c.MapClass {
	case "FractionAllocMap":
		s.PluginFractional = map[model.DeviceName]bool{name: true}
	case "DiscretePropertyAllocMap":
		s.PluginFractional = map[model.DeviceName]bool{name: false}
	case "":
	default:
		return nil, s, nil, fmt.Errorf("case %s: map_class %q: want FractionAllocMap or DiscretePropertyAllocMap", c.ID, c.MapClass)
	}
	if c.QuantumSize != nil {
		q, err := model.ParseDec(*c.QuantumSize)
		if err != nil || !q.IsFinite() || q.Sign() <= 0 {
			return nil, s, nil, fmt.Errorf("case %s: quantum_size %q: want a decimal > 0", c.ID, *c.QuantumSize)
		}
		s.Quantum = q
	}
	s.ForbidFragmentation = c.AllowFrag != nil && !*c.AllowFrag
	for _, d := range devs {
		if d.SlotType != model.SlotTypeUnique && !d.Slot.CountsInAllocMap() {
			s.AllocMapSlots = appendOnce(s.AllocMapSlots, d.Slot)
		}
	}
	kernelIdx := map[string]int{}
	steps := make([]Step, 0, len(c.Operations))
	allocs := 0
	for i, op := range c.Operations {
		switch op.Op {
		case "allocate":
			allocs++
			if op.Kernel != "" {
				kernelIdx[op.Kernel] = allocs
			}
			req := alloc.Request(op.Request)
			steps = append(steps, Step{Text: FormatRequest(req), Request: req})
		case "free":
			n, ok := kernelIdx[op.Kernel]
			if !ok {
				return nil, s, nil, fmt.Errorf("case %s: operation #%d frees %q, which no earlier allocate created", c.ID, i+1, op.Kernel)
			}
			steps = append(steps, Step{Text: fmt.Sprintf("free=%d", n), Free: n})
		default:
			return nil, s, nil, fmt.Errorf("case %s: operation #%d: op %q: want allocate or free", c.ID, i+1, op.Op)
		}
	}
	return devs, s, steps, nil
}

func appendOnce[T comparable](s []T, v T) []T {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// Mismatch is one difference between a simulation and a case's recorded
// results.
type Mismatch struct {
	Step int // 1-based operation
	What string
}

func (m Mismatch) String() string { return fmt.Sprintf("op #%d: %s", m.Step, m.What) }

// Check compares a simulation of the case (run with RunOptions.Trace) with
// its recorded results: success or the error kind, the allocation's
// entries (exact decimal strings, order ignored, as the corpus allows) and
// the whole state after each operation (exact, in order).
func (c *Case) Check(res *Result) []Mismatch {
	var out []Mismatch
	if len(res.Steps) != len(c.Operations) {
		return []Mismatch{{0, fmt.Sprintf("%d steps ran for %d operations", len(res.Steps), len(c.Operations))}}
	}
	for i, op := range c.Operations {
		r := &res.Steps[i]
		exp := op.Expected
		if exp == nil {
			continue
		}
		add := func(format string, args ...any) {
			out = append(out, Mismatch{i + 1, fmt.Sprintf(format, args...)})
		}
		switch {
		case exp.OK && !r.OK():
			add("%s failed (%s: %v), want success", r.Step.Text, r.ErrKind, r.Err)
		case !exp.OK && r.OK():
			add("%s succeeded with %s, want %s", r.Step.Text, FlattenAllocation(r.Alloc), exp.Error)
		case !exp.OK && r.ErrKind != exp.Error:
			add("%s: error %s, want %s", r.Step.Text, r.ErrKind, exp.Error)
		case exp.OK && op.Op == "allocate":
			if have, want := FlattenAllocation(r.Alloc), exp.Allocation.Alloc; !SameEntries(have, want) {
				add("%s: allocation %s, want %s", r.Step.Text, have, want)
			}
		}
		if exp.StateAfter.Set && r.StateAfter != nil {
			if have, want := r.StateAfter.String(), exp.StateAfter.Alloc.String(); have != want {
				add("state after %s: %s, want %s", r.Step.Text, have, want)
			}
		}
	}
	return out
}

// SameEntries reports whether two allocations hold the same (slot, device,
// amount) entries, amounts compared as printed, order ignored. A slot with
// no shares counts as an entry of its own.
func SameEntries(a, b alloc.Allocation) bool {
	ea, eb := entries(a), entries(b)
	if len(ea) != len(eb) {
		return false
	}
	n := map[string]int{}
	for _, e := range ea {
		n[e]++
	}
	for _, e := range eb {
		n[e]--
		if n[e] < 0 {
			return false
		}
	}
	return true
}

func entries(a alloc.Allocation) []string {
	var out []string
	for _, s := range a {
		if len(s.Shares) == 0 {
			out = append(out, string(s.Slot)+"\x00")
		}
		for _, sh := range s.Shares {
			out = append(out, strings.Join([]string{string(s.Slot), string(sh.Device), sh.Amount.String()}, "\x00"))
		}
	}
	return out
}
