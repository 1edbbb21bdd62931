package agentconfig

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlDoc indexes where every key-value and table of a TOML file sits, so
// that an edit can rewrite one value and leave every other byte alone.
// Paths are lists of keys; an [[array table]] instance is one element made
// by arrElem ("agents" #1 is arrElem("agents", 1)).
type tomlDoc struct {
	raw    []byte
	kvs    map[string]*kvLoc
	tables map[string]*tableLoc
	// headers are the [table] and [[array table]] sections in file order.
	headers []*tableLoc
	nl      string // "\r\n" when the file uses CRLF, else "\n"
}

// kvLoc is one key = value.
type kvLoc struct {
	path     []string
	start    int // first byte of the key
	valStart int // first byte of the value
	end      int // just past the value
	inline   bool
	kind     unstable.Kind
	// sect is the path of the [section] (or root) whose text holds the
	// key-value; for an inline one, of the section holding the outermost
	// key-value around it.
	sect []string
}

// tableLoc is a table: a [header] section, an inline table value, or a
// table only implied by dotted keys or sub-table headers.
type tableLoc struct {
	path []string
	kind tableKind
	// header sections: headerStart is the start of the header's line.
	headerStart int
	headerEnd   int // just past the header line (after its newline)
	// inline tables: open is just past '{'.
	open int
	// lastEnd is the end of the last key-value written directly in the
	// section (std) or the table (inline); -1 when there is none.
	lastEnd int
	// lastKV is that key-value (nil when none).
	lastKV *kvLoc
}

type tableKind int

const (
	tableImplicit tableKind = iota // implied by a dotted key or a deeper header
	tableHeader                    // [a.b] or [[a.b]]
	tableInline                    // a = { ... }
	tableRoot                      // the document root
)

const arrSep = "\x1d"

// arrElem names instance i of the array of tables key.
func arrElem(key string, i int) string { return key + arrSep + strconv.Itoa(i) }

func pathKey(p []string) string {
	// Each key after a separator of its own: a table named "" ([""]) is
	// not the root, which a plain join made it (an edit meant for the
	// root then landed in it).
	var b strings.Builder
	for _, k := range p {
		b.WriteByte(0)
		b.WriteString(k)
	}
	return b.String()
}

// pathString renders a path for messages: agents[1].resource.devices.cuda.
func pathString(p []string) string {
	var b strings.Builder
	for i, e := range p {
		name, idx, isArr := strings.Cut(e, arrSep)
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tomlKey(name))
		if isArr {
			b.WriteString("[" + idx + "]")
		}
	}
	return b.String()
}

// indexTOML parses raw with go-toml's position-keeping parser. raw must
// already have decoded cleanly; an error here means the file uses a form
// the index does not follow.
func indexTOML(raw []byte) (d *tomlDoc, err error) {
	defer func() {
		// The unstable parser documents panics on malformed trees; never let
		// one take down a console.
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("index TOML: %v", r)
		}
	}()
	d = &tomlDoc{raw: raw, kvs: map[string]*kvLoc{}, tables: map[string]*tableLoc{}, nl: "\n"}
	if bytes.Contains(raw, []byte("\r\n")) {
		d.nl = "\r\n"
	}
	root := &tableLoc{kind: tableRoot, lastEnd: -1}
	d.tables[pathKey(nil)] = root
	arrays := map[string]int{}
	var p unstable.Parser
	p.Reset(raw)
	cur := root
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, first := keyParts(e.Key())
			if len(parts) == 0 {
				return nil, fmt.Errorf("index TOML: empty table header")
			}
			var path []string
			if e.Kind == unstable.ArrayTable {
				path = resolve(arrays, parts[:len(parts)-1])
				last := parts[len(parts)-1]
				k := pathKey(append(slices.Clone(path), last))
				n := arrays[k]
				arrays[k] = n + 1
				path = append(path, arrElem(last, n))
			} else {
				path = resolve(arrays, parts)
			}
			start := lineStart(raw, int(first.Raw.Offset))
			t := &tableLoc{path: path, kind: tableHeader, headerStart: start,
				headerEnd: lineEnd(raw, int(first.Raw.Offset)), lastEnd: -1}
			d.implyParents(path)
			d.tables[pathKey(path)] = t
			d.headers = append(d.headers, t)
			cur = t
		case unstable.KeyValue:
			d.addKV(cur, cur.path, cur.path, e, false)
		}
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("index TOML: %w", err)
	}
	return d, nil
}

// resolve maps header key parts to a path, descending into the latest
// instance of every array of tables on the way.
func resolve(arrays map[string]int, parts []string) []string {
	var out []string
	for _, part := range parts {
		out = append(out, part)
		if n, ok := arrays[pathKey(out)]; ok {
			out[len(out)-1] = arrElem(part, n-1)
		}
	}
	return out
}

func keyParts(it unstable.Iterator) ([]string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		parts = append(parts, string(n.Data))
	}
	return parts, first
}

func (d *tomlDoc) implyParents(path []string) {
	for i := 1; i < len(path); i++ {
		k := pathKey(path[:i])
		if _, ok := d.tables[k]; !ok {
			d.tables[k] = &tableLoc{path: slices.Clone(path[:i]), kind: tableImplicit, lastEnd: -1}
		}
	}
}

// addKV records a key-value found in table t (whose path is base), and
// recurses into an inline-table value.
func (d *tomlDoc) addKV(t *tableLoc, sect, base []string, e *unstable.Node, inline bool) {
	parts, _ := keyParts(e.Key())
	var lastKey *unstable.Node
	it := e.Key()
	for it.Next() {
		lastKey = it.Node()
	}
	v := e.Value()
	path := append(slices.Clone(base), parts...)
	start := int(e.Raw.Offset)
	end := start + int(e.Raw.Length)
	loc := &kvLoc{path: path, start: start, end: end, inline: inline, kind: v.Kind, sect: sect,
		valStart: valueStart(d.raw, int(lastKey.Raw.Offset+lastKey.Raw.Length))}
	d.kvs[pathKey(path)] = loc
	if len(parts) > 1 {
		d.implyParents(path)
	}
	t.lastEnd, t.lastKV = end, loc
	if v.Kind == unstable.InlineTable {
		d.addInline(sect, path, v)
	}
	if v.Kind == unstable.Array {
		// agents = [ { ... }, { ... } ]: each inline table is an instance
		// of the array, named like an [[agents]] one so that edits and
		// messages address both forms alike.
		last := path[len(path)-1]
		parent := path[:len(path)-1]
		c := v.Children()
		for i := 0; c.Next(); {
			n := c.Node()
			if n.Kind == unstable.Comment {
				continue
			}
			if n.Kind == unstable.InlineTable {
				d.addInline(sect, append(slices.Clone(parent), arrElem(last, i)), n)
			}
			i++
		}
	}
}

// addInline records the inline table v at path and its key-values.
func (d *tomlDoc) addInline(sect, path []string, v *unstable.Node) {
	it := &tableLoc{path: path, kind: tableInline, open: int(v.Raw.Offset) + 1, lastEnd: -1}
	d.tables[pathKey(path)] = it
	c := v.Children()
	for c.Next() {
		if n := c.Node(); n.Kind == unstable.KeyValue {
			d.addKV(it, sect, path, n, true)
		}
	}
}

// valueStart finds the value after "key", skipping blanks, '=' and blanks.
func valueStart(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t') {
		i++
	}
	if i < len(raw) && raw[i] == '=' {
		i++
	}
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t') {
		i++
	}
	return i
}

func lineStart(raw []byte, i int) int {
	return bytes.LastIndexByte(raw[:i], '\n') + 1
}

// lineEnd returns the offset just past the newline ending the line that
// holds i (len(raw) on the last line).
func lineEnd(raw []byte, i int) int {
	j := bytes.IndexByte(raw[i:], '\n')
	if j < 0 {
		return len(raw)
	}
	return i + j + 1
}

// lineOf returns the 1-based line number of offset i.
func lineOf(raw []byte, i int) int {
	if i > len(raw) {
		i = len(raw)
	}
	return bytes.Count(raw[:i], []byte("\n")) + 1
}

func indentAt(raw []byte, i int) string {
	s := lineStart(raw, i)
	e := s
	for e < len(raw) && (raw[e] == ' ' || raw[e] == '\t') {
		e++
	}
	return string(raw[s:e])
}

// kv returns the key-value at path, trying each spelling of the last key.
func (d *tomlDoc) kv(path []string, alts ...string) *kvLoc {
	if l := d.kvs[pathKey(path)]; l != nil {
		return l
	}
	for _, a := range alts {
		p := append(slices.Clone(path[:len(path)-1]), a)
		if l := d.kvs[pathKey(p)]; l != nil {
			return l
		}
	}
	return nil
}

func (d *tomlDoc) table(path []string) *tableLoc { return d.tables[pathKey(path)] }

// lineOfPath returns the line of the key-value or header at path, or of
// the nearest enclosing one (a key inside an inline table or dotted key),
// 0 when nothing matches.
func (d *tomlDoc) lineOfPath(path []string) int {
	for j := len(path); j >= 1; j-- {
		p := path[:j]
		if kv := d.kv(p, snake(p[j-1])); kv != nil {
			return lineOf(d.raw, kv.start)
		}
		if t := d.table(p); t != nil && t.kind == tableHeader {
			return lineOf(d.raw, t.headerStart)
		}
	}
	return 0
}

// sectionEnd is where a header section's text ends: past the line of its
// last key-value, or past its header line.
func (d *tomlDoc) sectionEnd(t *tableLoc) int {
	if t.lastEnd >= 0 {
		return lineEnd(d.raw, t.lastEnd)
	}
	return t.headerEnd
}

// dottedKVs returns the key-values written with dotted keys in [section]
// text (not inside an inline table) that define keys below path, in file
// order: the text of a table made by dotted keys.
func (d *tomlDoc) dottedKVs(path []string) []*kvLoc {
	var out []*kvLoc
	for _, kv := range d.kvs {
		// The key's own section is above the table: the dots make it.
		if !kv.inline && len(kv.path) > len(path) && slices.Equal(kv.path[:len(path)], path) &&
			len(kv.sect) < len(path) && slices.Equal(kv.sect, path[:len(kv.sect)]) {
			out = append(out, kv)
		}
	}
	slices.SortFunc(out, func(a, b *kvLoc) int { return a.start - b.start })
	return out
}

// subSections returns the header sections at or below path, in file order.
func (d *tomlDoc) subSections(path []string) []*tableLoc {
	var out []*tableLoc
	for _, t := range d.headers {
		if len(t.path) >= len(path) && slices.Equal(t.path[:len(path)], path) {
			out = append(out, t)
		}
	}
	return out
}

// blockEnd is the end of the last section at or below path, or -1.
func (d *tomlDoc) blockEnd(path []string) int {
	end := -1
	for _, t := range d.subSections(path) {
		end = max(end, d.sectionEnd(t))
	}
	return end
}

// lastHeaderIn returns the last header section at or below path.
func (d *tomlDoc) lastHeaderIn(path []string) *tableLoc {
	secs := d.subSections(path)
	if len(secs) == 0 {
		return nil
	}
	return secs[len(secs)-1]
}

// tomlKey writes a key bare when TOML allows it, quoted otherwise.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return tomlString(k)
		}
	}
	return k
}

// tomlString writes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlStrings writes a one-line array of strings.
func tomlStrings[E ~string](xs []E) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = tomlString(string(x))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
