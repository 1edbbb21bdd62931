package agentconfig

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/fgtop/fgtop/model"
)

// Change is one edit Render makes, for showing the operator what the file
// will look like.
type Change struct {
	// Line is the 1-based line of the old file where the edit starts.
	Line int `json:"line"`
	// Key is the TOML key concerned, e.g. agents[1].resource.devices.cuda.
	Key string `json:"key"`
	// Old and New are the bytes replaced and written ("" for an insertion or
	// a deletion).
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
}

// ErrUneditable is wrapped when a change would need to rewrite a part of
// the file written in a form fgtop does not edit (dotted keys making a
// table, for instance); the operator has to make that change by hand.
var ErrUneditable = errors.New("cannot edit this part of the file surgically")

// Render returns cur's file with the partition of draft: allocation-mode
// and each agent's allocation table. Only values that differ are rewritten;
// every other byte, comments and spacing included, stays as it was. A table
// the draft drops is removed (header, its keys and the comments between
// them); one it adds is inserted at the end of its agent's block. draft
// must have cur's agents in cur's order (it is normally cur.Clone() with
// changes).
func Render(cur, draft *Config) ([]byte, []Change, error) {
	if len(cur.Agents) != len(draft.Agents) {
		return nil, nil, fmt.Errorf("draft has %d agents, the config %d: fgtop does not add or remove agents", len(draft.Agents), len(cur.Agents))
	}
	for i := range cur.Agents {
		if cur.Agents[i].ID != draft.Agents[i].ID {
			return nil, nil, fmt.Errorf("draft agent #%d is %q, the config's is %q: fgtop does not add, remove or reorder agents", i, draft.Agents[i].ID, cur.Agents[i].ID)
		}
	}
	doc, err := indexTOML(cur.Raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrUneditable, err)
	}
	e := &editor{doc: doc, format: draft.AllocFormat}
	if draft.Mode != cur.Mode {
		e.set([]string{"resource", "allocation-mode"}, []string{"allocation_mode"}, tomlString(draft.Mode))
	}
	if cur.Format != FormatSingle {
		g := []string{"resource", "allocations"}
		switch {
		case cur.GlobalAlloc != nil && draft.GlobalAlloc == nil:
			e.deleteTable(g)
		case draft.GlobalAlloc != nil:
			e.alloc(g, cur.GlobalAlloc, draft.GlobalAlloc)
		}
	}
	for i := range cur.Agents {
		path := []string{arrElem("agents", i), "resource"}
		if cur.Format == FormatSingle {
			path = []string{"resource", "allocations"}
		}
		was, want := cur.Agents[i], draft.Agents[i]
		var old *Allocation
		if was.OwnAlloc {
			old = was.Alloc
		}
		switch {
		case was.OwnAlloc && (!want.OwnAlloc || want.Alloc == nil):
			e.deleteTable(path)
		case want.OwnAlloc && want.Alloc != nil:
			e.alloc(path, old, want.Alloc)
		}
	}
	if len(e.errs) > 0 {
		return nil, nil, errors.Join(e.errs...)
	}
	return e.apply()
}

// editor collects edits against one indexed document.
type editor struct {
	doc    *tomlDoc
	format Format
	edits  []edit
	// created are tables Render inserts, by path, so keys for the same new
	// table go under one header.
	created map[string]*newTable
	// emptyInline are the edits that fill an empty inline table, by path.
	emptyInline map[string]int
	errs        []error
}

type edit struct {
	start, end int
	text       string
	seq        int
	key        string
	// header: the edit inserts a new [table]. At one offset it goes after
	// every other insertion, which belongs to the section before it.
	header bool
}

type newTable struct {
	path []string
	at   int // insertion offset
	kvs  []string
	seq  int
	pre  string // what goes before the header (newline, indentation)
	ind  string // key indentation
}

func (e *editor) fail(format string, a ...any) {
	e.errs = append(e.errs, fmt.Errorf(format, a...))
}

func (e *editor) add(start, end int, text string, path []string) {
	e.edits = append(e.edits, edit{start: start, end: end, text: text, seq: len(e.edits), key: pathString(path)})
}

// set writes value at path: the value is replaced when the key exists, else
// the key is added to the nearest table that holds it (nested inline tables
// for the missing levels), or a new table is made.
func (e *editor) set(path, alts []string, value string) {
	if t := e.doc.table(path); t != nil && e.doc.kv(path, alts...) == nil {
		e.fail("%w: %s is a table in this file, where a value belongs; fix it by hand", ErrUneditable, pathString(path))
		return
	}
	if kv := e.doc.kv(path, alts...); kv != nil {
		if string(e.doc.raw[kv.valStart:kv.end]) != value {
			e.add(kv.valStart, kv.end, value, path)
		}
		return
	}
	for j := len(path) - 1; j >= 0; j-- {
		if nt := e.created[pathKey(path[:j])]; nt != nil {
			nt.kvs = append(nt.kvs, nested(path[j:], value))
			return
		}
		t := e.doc.table(path[:j])
		if t == nil {
			if j > 0 && e.doc.table(append(slices.Clone(path[:j-1]), arrElem(path[j-1], 0))) != nil {
				// [[resource]]: a new [resource] beside it would define
				// the key twice, and the file would not load.
				e.fail("%w: %s is an array of tables ([[%s]]), not a table; fix it by hand", ErrUneditable, pathString(path[:j]), pathString(path[:j]))
				return
			}
			if kv := e.doc.kv(path[:j]); kv != nil && j > 0 {
				e.fail("%w: %s is %s, not a table", ErrUneditable, pathString(path[:j]), kv.kind)
				return
			}
			continue
		}
		switch t.kind {
		case tableHeader:
			e.insertInSection(t, nested(path[j:], value), path)
			return
		case tableInline:
			e.insertInInline(t, nested(path[j:], value), path)
			return
		case tableRoot:
			if j == len(path)-1 {
				// A top-level key would land in whatever table the file
				// ends with; never write one.
				e.fail("%w: %s would be a top-level key", ErrUneditable, pathString(path))
				return
			}
			e.newTable(path[:j+1], nested(path[j+1:], value))
			return
		default:
			// A table made by dotted keys (resource.cpu = 4): one more
			// dotted key-value beside them.
			if kvs := e.doc.dottedKVs(path[:j]); len(kvs) > 0 {
				e.insertDotted(kvs[len(kvs)-1], path, j, value)
				return
			}
			// A table implied by deeper headers: a new [header] for the
			// next level down is safe when nothing else defines it.
			if j < len(path)-1 {
				e.newTable(path[:j+1], nested(path[j+1:], value))
				return
			}
			e.fail("%w: %s is defined with dotted keys; change %s by hand", ErrUneditable, pathString(path[:j]), pathString(path))
			return
		}
	}
}

// nested renders keys k1.k2...kn = value as "k1 = { k2 = { ... = value } }".
func nested(keys []string, value string) string {
	s := value
	for i := len(keys) - 1; i >= 1; i-- {
		s = "{ " + tomlKey(keys[i]) + " = " + s + " }"
	}
	return tomlKey(keys[0]) + " = " + s
}

func (e *editor) insertInSection(t *tableLoc, line string, path []string) {
	raw := e.doc.raw
	at, ind := t.headerEnd, indentAt(raw, t.headerStart)
	if t.lastKV != nil {
		at, ind = lineEnd(raw, t.lastEnd), indentAt(raw, t.lastKV.start)
	}
	pre := ""
	if at == len(raw) && at > 0 && raw[at-1] != '\n' {
		pre = e.doc.nl
	}
	e.add(at, at, pre+ind+line+e.doc.nl, path)
}

// insertDotted writes path = value as a dotted key-value on a line of its
// own after last, a dotted key-value of the table path[:j] (so in the same
// section, with the same indentation): "resource.mem = ..." beside
// "resource.cpu = 4".
func (e *editor) insertDotted(last *kvLoc, path []string, j int, value string) {
	raw := e.doc.raw
	keys := make([]string, 0, j-len(last.sect))
	for _, k := range path[len(last.sect):j] {
		keys = append(keys, tomlKey(k))
	}
	at := lineEnd(raw, last.end)
	pre := ""
	if at == len(raw) && at > 0 && raw[at-1] != '\n' {
		pre = e.doc.nl
	}
	e.add(at, at, pre+indentAt(raw, last.start)+strings.Join(keys, ".")+"."+nested(path[j:], value)+e.doc.nl, path)
}

func (e *editor) insertInInline(t *tableLoc, kv string, path []string) {
	if t.lastKV != nil {
		e.add(t.lastEnd, t.lastEnd, ", "+kv, path)
		return
	}
	// An empty table ({}): every key goes into one insertion, so they
	// are separated by commas.
	k := pathKey(t.path)
	if i, ok := e.emptyInline[k]; ok {
		ed := &e.edits[i]
		tail := ""
		if strings.HasSuffix(ed.text, " ") {
			ed.text, tail = strings.TrimSuffix(ed.text, " "), " "
		}
		ed.text += ", " + kv + tail
		return
	}
	text := " " + kv
	if t.open < len(e.doc.raw) && e.doc.raw[t.open] == '}' {
		text += " "
	}
	if e.emptyInline == nil {
		e.emptyInline = map[string]int{}
	}
	e.emptyInline[k] = len(e.edits)
	e.add(t.open, t.open, text, path)
}

// newTable starts a [header] table at path with one key-value. It goes at
// the end of the block of its nearest ancestor that has sections (an
// [[agents]] entry, [resource]), or at the end of the file.
func (e *editor) newTable(path []string, kv string) {
	if e.created == nil {
		e.created = map[string]*newTable{}
	}
	raw := e.doc.raw
	nt := &newTable{path: slices.Clone(path), kvs: []string{kv}, seq: len(e.edits)}
	// An edit slot keeps the table's place among edits at the same offset.
	e.add(0, 0, "", path)
	nt.at = -1
	for j := len(path) - 1; j >= 1; j-- {
		if end := e.doc.blockEnd(path[:j]); end >= 0 {
			nt.at = end
			last := e.doc.lastHeaderIn(path[:j])
			nt.pre = indentAt(raw, last.headerStart)
			nt.ind = nt.pre
			if last.lastKV != nil {
				nt.ind = indentAt(raw, last.lastKV.start)
			}
			break
		}
	}
	if nt.at < 0 {
		nt.at = len(raw)
		nt.pre = e.doc.nl
		if len(raw) > 0 && raw[len(raw)-1] != '\n' {
			nt.pre = e.doc.nl + e.doc.nl
		}
	} else if nt.at == len(raw) && len(raw) > 0 && raw[len(raw)-1] != '\n' {
		nt.pre = e.doc.nl + nt.pre
	}
	e.created[pathKey(path)] = nt
}

// header renders the [a.b] header of a new table: array instances are
// named without their index, which TOML resolves to the latest instance,
// the one whose block the table goes into.
func header(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		name, _, _ := strings.Cut(p, arrSep)
		parts[i] = tomlKey(name)
	}
	return "[" + strings.Join(parts, ".") + "]"
}

// deleteTable removes the table at path: every [header] section at or
// below it (header, keys and the comments between them), or the key-value
// that holds it inline.
func (e *editor) deleteTable(path []string) {
	if kv := e.doc.kv(path); kv != nil {
		e.deleteKV(kv)
		return
	}
	secs := e.doc.subSections(path)
	for _, t := range secs {
		e.add(t.headerStart, e.doc.sectionEnd(t), "", t.path)
	}
	// Keys written with dotted paths (resource.cpu = ... under [[agents]])
	// go too, each with its line: a key-value has a line of its own in a
	// section.
	for _, kv := range e.doc.dottedKVs(path) {
		if !inSections(kv, secs) {
			e.deleteKV(kv)
		}
	}
}

func inSections(kv *kvLoc, secs []*tableLoc) bool {
	for _, t := range secs {
		// A key-value belongs to a section when it sits between its header
		// and the section's end.
		if kv.start >= t.headerStart && kv.start < max(t.headerEnd, t.lastEnd) {
			return true
		}
	}
	return false
}

// deleteKV removes a key-value: its whole line in a [section], or the
// entry and one neighbouring comma in an inline table.
func (e *editor) deleteKV(kv *kvLoc) {
	raw := e.doc.raw
	if !kv.inline {
		e.add(lineStart(raw, kv.start), lineEnd(raw, kv.end), "", kv.path)
		return
	}
	isBlank := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	j := kv.end
	for j < len(raw) && isBlank(raw[j]) {
		j++
	}
	if j < len(raw) && raw[j] == ',' {
		j++
		for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t') {
			j++
		}
		e.add(kv.start, j, "", kv.path)
		return
	}
	i := kv.start
	for i > 0 && isBlank(raw[i-1]) {
		i--
	}
	if i > 0 && raw[i-1] == ',' {
		e.add(i-1, kv.end, "", kv.path)
		return
	}
	e.add(kv.start, kv.end, "", kv.path)
}

// alloc writes the fields of want that differ from old (nil: the table is
// new) at path.
func (e *editor) alloc(path []string, old, want *Allocation) {
	if old == nil {
		old = &Allocation{}
	}
	at := func(k ...string) []string { return append(slices.Clone(path), k...) }
	if e.doc.table(path) == nil && e.doc.kv(path) == nil && e.created[pathKey(path)] == nil {
		if parent := e.doc.table(path[:len(path)-1]); parent != nil && parent.kind == tableInline {
			// An agent written as an inline table (agents = [ {...} ]): the
			// new table is one inline value inside it.
			e.set(path, nil, inlineAlloc(want, e.format))
			return
		}
		// A new table: its header goes at the end of its agent's block and
		// every key below joins it.
		e.newTable(path, "")
	}
	switch {
	case want.HasCPU && e.format == FormatSlotBased:
		// A list where a count belongs is rewritten, unless the draft
		// still carries that same list (rendering a config onto itself
		// changes nothing, whatever it holds).
		if !old.HasCPU || !old.CPUCount.Equal(want.CPUCount) || (old.CPU != nil && want.CPU == nil) {
			e.set(at("cpu"), nil, want.CPUCount.String())
		}
	case want.HasCPU:
		// nil CPU means the old value was not a list (a count, or a
		// value of the wrong type): a draft that sets a list rewrites it.
		if !old.HasCPU || !slices.Equal(old.CPU, want.CPU) || (old.CPU == nil) != (want.CPU == nil) {
			setList(e, at("cpu"), want.CPU)
		}
	case old.HasCPU:
		if kv := e.doc.kv(at("cpu")); kv != nil {
			e.deleteKV(kv)
		}
	}
	switch {
	case want.HasMem:
		if !old.HasMem || !old.Mem.Equal(want.Mem) {
			e.set(at("mem"), nil, tomlString(SizeText(want.Mem)))
		}
	case old.HasMem:
		if kv := e.doc.kv(at("mem")); kv != nil {
			e.deleteKV(kv)
		}
	}
	if e.format == FormatSlotBased {
		devs := at("devices")
		if e.doc.kv(devs) == nil && e.doc.table(devs) == nil && e.created[pathKey(devs)] == nil && len(want.Slots) > 0 {
			// No devices table yet: write it whole, one inline table.
			e.set(devs, nil, slotTable(want))
			return
		}
		for _, s := range want.SlotNames() {
			v := want.Slots[s]
			if o, ok := old.Slots[s]; !ok || !o.Equal(v) {
				e.set(at("devices", string(s)), nil, tomlString(v.String()))
			}
		}
		for _, s := range old.SlotNames() {
			if _, ok := want.Slots[s]; !ok {
				if kv := e.doc.kv(at("devices", string(s))); kv != nil {
					e.deleteKV(kv)
				}
			}
		}
		return
	}
	devs := at("devices")
	if e.doc.kv(devs) == nil && e.doc.table(devs) == nil && e.created[pathKey(devs)] == nil && len(want.Devices) > 0 {
		// No devices table yet: write it whole, one inline table.
		parts := make([]string, 0, len(want.Devices))
		for _, n := range want.DeviceNames() {
			parts = append(parts, tomlKey(string(n))+" = "+tomlStrings(want.Devices[n]))
		}
		e.set(devs, nil, "{ "+strings.Join(parts, ", ")+" }")
		return
	}
	for _, n := range want.DeviceNames() {
		ids := want.Devices[n]
		if o, ok := old.Devices[n]; !ok || !slices.Equal(o, ids) {
			setList(e, at("devices", string(n)), ids)
		}
	}
	for _, n := range old.DeviceNames() {
		if _, ok := want.Devices[n]; !ok {
			if kv := e.doc.kv(at("devices", string(n))); kv != nil {
				e.deleteKV(kv)
			}
		}
	}
}

// slotTable writes a slot-based devices table inline:
// { "cuda.shares" = "2.0" }.
func slotTable(a *Allocation) string {
	parts := make([]string, 0, len(a.Slots))
	for _, s := range a.SlotNames() {
		parts = append(parts, tomlKey(string(s))+" = "+tomlString(a.Slots[s].String()))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// inlineAlloc writes a whole allocation table inline, in format f.
func inlineAlloc(a *Allocation, f Format) string {
	var parts []string
	if a.HasCPU {
		if f == FormatSlotBased {
			parts = append(parts, "cpu = "+a.CPUCount.String())
		} else {
			parts = append(parts, "cpu = "+tomlStrings(a.CPU))
		}
	}
	if a.HasMem {
		parts = append(parts, "mem = "+tomlString(SizeText(a.Mem)))
	}
	if f == FormatSlotBased && len(a.Slots) > 0 {
		parts = append(parts, "devices = "+slotTable(a))
	}
	if f != FormatSlotBased && len(a.Devices) > 0 {
		devs := make([]string, 0, len(a.Devices))
		for _, n := range a.DeviceNames() {
			devs = append(devs, tomlKey(string(n))+" = "+tomlStrings(a.Devices[n]))
		}
		parts = append(parts, "devices = { "+strings.Join(devs, ", ")+" }")
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// apply returns the edited bytes and the list of changes.
func (e *editor) apply() ([]byte, []Change, error) {
	raw := e.doc.raw
	// Fill in the created tables' text now that all their keys are known.
	for _, nt := range e.created {
		var b strings.Builder
		b.WriteString(nt.pre)
		b.WriteString(header(nt.path))
		b.WriteString(e.doc.nl)
		for _, kv := range nt.kvs {
			if kv != "" {
				b.WriteString(nt.ind + kv + e.doc.nl)
			}
		}
		e.edits[nt.seq] = edit{start: nt.at, end: nt.at, text: b.String(), seq: nt.seq, key: pathString(nt.path), header: true}
	}
	edits := slices.Clone(e.edits)
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		if edits[i].header != edits[j].header {
			return !edits[i].header
		}
		return edits[i].seq < edits[j].seq
	})
	for i := 1; i < len(edits); i++ {
		if edits[i].start < edits[i-1].end {
			// Two edits of one region would make the result depend on their
			// order; Render never plans that, so it is a bug to report.
			return nil, nil, fmt.Errorf("internal: edits of %s and %s overlap", edits[i-1].key, edits[i].key)
		}
	}
	kept := edits
	var out []byte
	var changes []Change
	pos := 0
	for _, ed := range kept {
		out = append(out, raw[pos:ed.start]...)
		out = append(out, ed.text...)
		pos = ed.end
		if ed.start == ed.end && ed.text == "" {
			continue
		}
		changes = append(changes, Change{Line: lineOf(raw, ed.start), Key: ed.key, Old: string(raw[ed.start:ed.end]), New: ed.text})
	}
	out = append(out, raw[pos:]...)
	return out, changes, nil
}

// SizeText writes a byte count the way operators write sizes in agent.toml:
// "120G" when it is a whole number of a binary unit, plain bytes
// otherwise, so that the value parses back to exactly the same number.
func SizeText(bytes model.Dec) string {
	i, err := bytes.Quantize(0, apd.RoundDown)
	if err != nil {
		return bytes.String()
	}
	n, ok := new(big.Int).SetString(i.String(), 10)
	if !ok || n.Sign() <= 0 {
		return bytes.String()
	}
	units := []string{"K", "M", "G", "T", "P", "E"}
	best := ""
	m := new(big.Int)
	q := new(big.Int).Set(n)
	for _, u := range units {
		if m.Mod(q, big.NewInt(1024)).Sign() != 0 {
			break
		}
		q.Div(q, big.NewInt(1024))
		best = q.String() + u
	}
	if best == "" {
		return n.String()
	}
	return best
}
