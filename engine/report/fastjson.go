package report

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/fgtop/fgtop/internal/parallel"
	"github.com/fgtop/fgtop/model"
)

// kernelMarker stands in for the kernels while encoding/json writes the
// rest of the document: an id no kernel has (a directory name cannot hold
// a NUL), found again by its encoding, which JSON's own quoting makes
// impossible inside a string.
const kernelMarker = "\x00fgtop:kernels\x00"

// parallelKernels is the number of kernels from which MarshalSnapshot
// splits the work over the processors.
const parallelKernels = 2048

// MarshalSnapshot is Marshal(FromSnapshot(s), indent), byte for byte. The
// kernels, nearly all of a large node's document (10 MB at 10,000
// kernels), are written by hand and, on a large node, in parts on up to
// four goroutines, without the intermediate maps and reflection: half
// the time of `snapshot --at` was building and encoding them.
func MarshalSnapshot(s *model.Snapshot, indent bool) ([]byte, error) {
	pieces, err := marshalPieces(s, indent)
	if err != nil {
		return nil, err
	}
	return bytes.Join(pieces, nil), nil
}

// WriteSnapshot writes what MarshalSnapshot returns to w, piece by piece
// (the kernels as written, not first copied into one buffer).
func WriteSnapshot(w io.Writer, s *model.Snapshot, indent bool) error {
	pieces, err := marshalPieces(s, indent)
	if err != nil {
		return err
	}
	for _, p := range pieces {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// marshalPieces is MarshalSnapshot's document in pieces, in order.
func marshalPieces(s *model.Snapshot, indent bool) ([][]byte, error) {
	ks := s.Kernels()
	if len(ks) == 0 {
		// An empty list stays on its line when indented: nothing to gain.
		b, err := Marshal(FromSnapshot(s), indent)
		return [][]byte{b}, err
	}
	parts := parallel.Parts(len(ks), parallelKernels, 4)
	bufs := make([][]byte, parts)
	failed := make([]bool, parts)
	part := func(p int) {
		lo, hi := len(ks)*p/parts, len(ks)*(p+1)/parts
		per := 1100
		if indent {
			per = 1700
		}
		b := make([]byte, 0, (hi-lo)*per)
		sc := kernelScratch{indent: indent}
		for i, k := range ks[lo:hi] {
			if i > 0 {
				b = append(b, ',')
				b = sc.newline(b, kernelDepth)
			}
			b = sc.appendKernel(b, k)
		}
		bufs[p], failed[p] = b, sc.failed
	}
	wait := parallel.Start(parts, part)
	head, mark, err := markedDoc(s, indent)
	part(0)
	wait()
	if err != nil {
		return nil, err
	}
	i := bytes.Index(head, mark)
	if i < 0 || bytes.LastIndex(head, mark) != i || slices.Contains(failed, true) {
		// Cannot happen (see kernelMarker; nothing of a kernel fails to
		// encode); the plain way is never wrong, and says why it fails.
		b, err := Marshal(FromSnapshot(s), indent)
		return [][]byte{b}, err
	}
	sep := []byte(",")
	if indent {
		sep = []byte(",\n    ")
	}
	out := [][]byte{head[:i]}
	for p, b := range bufs {
		if p > 0 && len(b) > 0 {
			out = append(out, sep)
		}
		out = append(out, b)
	}
	return append(out, head[i+len(mark):]), nil
}

// markedDoc is the document with one marker kernel in place of the
// kernels, and that kernel's encoding as it appears in it.
func markedDoc(s *model.Snapshot, indent bool) (doc, mark []byte, err error) {
	d := fromSnapshot(s, false)
	d.Kernels = []Kernel{{ID: kernelMarker}}
	if doc, err = Marshal(d, indent); err != nil {
		return nil, nil, err
	}
	mb, err := Marshal(Kernel{ID: kernelMarker}, false)
	if err != nil {
		return nil, nil, err
	}
	mb = bytes.TrimSuffix(mb, []byte("\n"))
	if indent {
		mb = indentCompactAt(nil, mb, "  ", 2)
	}
	return doc, mb, nil
}

// kernelDepth is where the kernels are in the document: elements of
// {"kernels": [ here ]}, their fields one deeper.
const kernelDepth = 2

// kernelScratch is one goroutine's reused key lists, and whether it
// writes indented (as indentCompact indents what Marshal writes) or
// compact JSON.
type kernelScratch struct {
	indent bool
	slots  []string
	ids    []string
	tmp    bytes.Buffer
	enc    *json.Encoder
	// failed: encoding/json refused a part (MarshalSnapshot then falls
	// back to it whole, to return its error).
	failed bool
}

const spaces = "                                "

// newline starts a line at depth, when indenting.
func (sc *kernelScratch) newline(b []byte, depth int) []byte {
	if !sc.indent {
		return b
	}
	b = append(b, '\n')
	for n := 2 * depth; n > 0; n -= len(spaces) {
		b = append(b, spaces[:min(n, len(spaces))]...)
	}
	return b
}

// key writes an object's member name: the first (first) after the
// opening brace, or after a comma; the member's line at depth.
func (sc *kernelScratch) key(b []byte, depth int, first bool, name string) []byte {
	if !first {
		b = append(b, ',')
	}
	b = sc.newline(b, depth)
	b = append(b, '"')
	b = append(b, name...)
	if sc.indent {
		return append(b, `": `...)
	}
	return append(b, `":`...)
}

// appendKernel appends kernelDoc(k) as Marshal (and, indenting,
// indentCompact) writes it: keys of maps sorted, empty strings of
// omitempty fields left out, an empty object on its line.
func (sc *kernelScratch) appendKernel(b []byte, k *model.Kernel) []byte {
	const d = kernelDepth + 1
	b = append(b, '{')
	b = sc.appendString(sc.key(b, d, true, "id"), string(k.ID))
	b = sc.appendString(sc.key(b, d, false, "agent"), string(k.Agent))
	b = sc.appendString(sc.key(b, d, false, "path"), k.Path)
	b = sc.appendString(sc.key(b, d, false, "state"), string(k.State))
	b = sc.key(b, d, false, "slots")
	sc.slots = sc.slots[:0]
	for s := range k.Slots {
		sc.slots = append(sc.slots, string(s))
	}
	slices.Sort(sc.slots)
	b = append(b, '{')
	for i, s := range sc.slots {
		b = sc.appendString(sc.mapKey(b, d+1, i == 0, s), k.Slots[model.SlotName(s)].String())
	}
	b = sc.closeObject(b, d, len(sc.slots))
	b = sc.key(b, d, false, "allocations")
	sc.slots = sc.slots[:0]
	for s := range k.Alloc {
		sc.slots = append(sc.slots, string(s))
	}
	slices.Sort(sc.slots)
	b = append(b, '{')
	for i, s := range sc.slots {
		b = sc.mapKey(b, d+1, i == 0, s)
		devs := k.Alloc[model.SlotName(s)]
		sc.ids = sc.ids[:0]
		for id := range devs {
			sc.ids = append(sc.ids, string(id))
		}
		slices.Sort(sc.ids)
		b = append(b, '{')
		for j, id := range sc.ids {
			b = sc.appendString(sc.mapKey(b, d+2, j == 0, id), devs[model.DeviceID(id)].String())
		}
		b = sc.closeObject(b, d+1, len(sc.ids))
	}
	b = sc.closeObject(b, d, len(sc.slots))
	if !k.ModTime.IsZero() {
		var tb [64]byte
		b = sc.appendString(sc.key(b, d, false, "mod_time"), string(k.ModTime.UTC().AppendFormat(tb[:0], time.RFC3339Nano)))
	}
	if k.Legacy {
		b = append(sc.key(b, d, false, "legacy"), "true"...)
	}
	if k.Problem != nil {
		b = sc.appendJSON(sc.key(b, d, false, "problem"), d, issue(*k.Problem))
	}
	b = sc.appendOpt(b, d, "agent_by", string(k.AgentBy))
	if r := k.Record; r != nil {
		b = sc.appendOpt(b, d, "session_id", r.SessionID)
		b = sc.appendOpt(b, d, "session_type", r.SessionType)
		b = sc.appendOpt(b, d, "owner_user_id", r.OwnerUserID)
		b = sc.appendOpt(b, d, "owner_project_id", r.OwnerProjectID)
		b = sc.appendOpt(b, d, "image", r.Image)
		b = sc.appendOpt(b, d, "architecture", r.Architecture)
	}
	b = sc.appendOpt(b, d, "container", k.Container)
	if k.Use != nil {
		// Rare enough, and nested enough, for encoding/json.
		b = sc.appendJSON(sc.key(b, d, false, "use"), d, kernelUseDoc(k.Use))
	}
	return sc.closeObject(b, kernelDepth, 1)
}

// mapKey writes a map's key, quoted as any string.
func (sc *kernelScratch) mapKey(b []byte, depth int, first bool, k string) []byte {
	if !first {
		b = append(b, ',')
	}
	b = sc.appendString(sc.newline(b, depth), k)
	if sc.indent {
		return append(b, ": "...)
	}
	return append(b, ':')
}

// closeObject closes an object of n members whose brace is at depth (an
// empty one right after its opening brace).
func (sc *kernelScratch) closeObject(b []byte, depth, n int) []byte {
	if n > 0 {
		b = sc.newline(b, depth)
	}
	return append(b, '}')
}

// appendOpt appends an omitempty string member of an object at depth.
func (sc *kernelScratch) appendOpt(b []byte, depth int, key, v string) []byte {
	if v == "" {
		return b
	}
	return sc.appendString(sc.key(b, depth, false, key), v)
}

// appendString appends s quoted as encoding/json quotes it without HTML
// escaping: printable ASCII as is, anything else by encoding/json itself.
func (sc *kernelScratch) appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7f || c == '"' || c == '\\' {
			return sc.appendJSON(b, 0, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSON appends v as Marshal encodes it, indented (when indenting)
// as a member of an object at depth.
func (sc *kernelScratch) appendJSON(b []byte, depth int, v any) []byte {
	if sc.enc == nil {
		sc.enc = json.NewEncoder(&sc.tmp)
		sc.enc.SetEscapeHTML(false)
	}
	sc.tmp.Reset()
	if err := sc.enc.Encode(v); err != nil {
		sc.failed = true
		return b
	}
	out := bytes.TrimSuffix(sc.tmp.Bytes(), []byte("\n"))
	if sc.indent {
		return indentCompactAt(b, out, "  ", depth)
	}
	return append(b, out...)
}
