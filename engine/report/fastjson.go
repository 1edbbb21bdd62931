package report

import (
	"bytes"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

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
	ks := s.Kernels()
	if len(ks) == 0 {
		// An empty list stays on its line when indented: nothing to gain.
		return Marshal(FromSnapshot(s), indent)
	}
	parts := 1
	if len(ks) >= parallelKernels {
		parts = min(runtime.GOMAXPROCS(0), 4)
	}
	bufs := make([][]byte, parts)
	failed := make([]bool, parts)
	part := func(p int) {
		lo, hi := len(ks)*p/parts, len(ks)*(p+1)/parts
		b := make([]byte, 0, (hi-lo)*1100)
		var sc kernelScratch
		for i, k := range ks[lo:hi] {
			if i > 0 {
				b = append(b, ',')
			}
			b = sc.appendKernel(b, k)
		}
		if indent {
			// Array elements at the document's third level:
			// {"kernels": [ here ]}.
			b = indentCompactAt(make([]byte, 0, len(b)+len(b)/2), b, "  ", 2)
		}
		bufs[p], failed[p] = b, sc.failed
	}
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part(p)
		}()
	}
	head, mark, err := markedDoc(s, indent)
	part(0)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	i := bytes.Index(head, mark)
	if i < 0 || bytes.LastIndex(head, mark) != i || slices.Contains(failed, true) {
		// Cannot happen (see kernelMarker; nothing of a kernel fails to
		// encode); the plain way is never wrong, and says why it fails.
		return Marshal(FromSnapshot(s), indent)
	}
	sep := []byte(",")
	if indent {
		sep = []byte(",\n    ")
	}
	n := len(head) - len(mark)
	for _, b := range bufs {
		n += len(b) + len(sep)
	}
	out := make([]byte, 0, n)
	out = append(out, head[:i]...)
	for p, b := range bufs {
		if p > 0 && len(b) > 0 {
			out = append(out, sep...)
		}
		out = append(out, b...)
	}
	return append(out, head[i+len(mark):]...), nil
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

// kernelScratch is one goroutine's reused key lists.
type kernelScratch struct {
	slots []string
	ids   []string
	tmp   bytes.Buffer
	enc   *json.Encoder
	// failed: encoding/json refused a part (MarshalSnapshot then falls
	// back to it whole, to return its error).
	failed bool
}

// appendKernel appends kernelDoc(k) as encoding/json writes it (keys of
// maps sorted, empty strings of omitempty fields left out).
func (sc *kernelScratch) appendKernel(b []byte, k *model.Kernel) []byte {
	b = append(b, `{"id":`...)
	b = sc.appendString(b, string(k.ID))
	b = append(b, `,"agent":`...)
	b = sc.appendString(b, string(k.Agent))
	b = append(b, `,"path":`...)
	b = sc.appendString(b, k.Path)
	b = append(b, `,"state":`...)
	b = sc.appendString(b, string(k.State))
	b = append(b, `,"slots":{`...)
	sc.slots = sc.slots[:0]
	for s := range k.Slots {
		sc.slots = append(sc.slots, string(s))
	}
	slices.Sort(sc.slots)
	for i, s := range sc.slots {
		if i > 0 {
			b = append(b, ',')
		}
		b = sc.appendString(b, s)
		b = append(b, ':')
		b = sc.appendString(b, k.Slots[model.SlotName(s)].String())
	}
	b = append(b, `},"allocations":{`...)
	sc.slots = sc.slots[:0]
	for s := range k.Alloc {
		sc.slots = append(sc.slots, string(s))
	}
	slices.Sort(sc.slots)
	for i, s := range sc.slots {
		if i > 0 {
			b = append(b, ',')
		}
		b = sc.appendString(b, s)
		b = append(b, ":{"...)
		devs := k.Alloc[model.SlotName(s)]
		sc.ids = sc.ids[:0]
		for id := range devs {
			sc.ids = append(sc.ids, string(id))
		}
		slices.Sort(sc.ids)
		for j, id := range sc.ids {
			if j > 0 {
				b = append(b, ',')
			}
			b = sc.appendString(b, id)
			b = append(b, ':')
			b = sc.appendString(b, devs[model.DeviceID(id)].String())
		}
		b = append(b, '}')
	}
	b = append(b, '}')
	if !k.ModTime.IsZero() {
		b = append(b, `,"mod_time":`...)
		var tb [64]byte
		b = sc.appendString(b, string(k.ModTime.UTC().AppendFormat(tb[:0], time.RFC3339Nano)))
	}
	if k.Legacy {
		b = append(b, `,"legacy":true`...)
	}
	if k.Problem != nil {
		b = append(b, `,"problem":`...)
		b = sc.appendJSON(b, issue(*k.Problem))
	}
	b = sc.appendOpt(b, `,"agent_by":`, string(k.AgentBy))
	if r := k.Record; r != nil {
		b = sc.appendOpt(b, `,"session_id":`, r.SessionID)
		b = sc.appendOpt(b, `,"session_type":`, r.SessionType)
		b = sc.appendOpt(b, `,"owner_user_id":`, r.OwnerUserID)
		b = sc.appendOpt(b, `,"owner_project_id":`, r.OwnerProjectID)
		b = sc.appendOpt(b, `,"image":`, r.Image)
		b = sc.appendOpt(b, `,"architecture":`, r.Architecture)
	}
	b = sc.appendOpt(b, `,"container":`, k.Container)
	if k.Use != nil {
		// Rare enough, and nested enough, for encoding/json.
		b = append(b, `,"use":`...)
		b = sc.appendJSON(b, kernelUseDoc(k.Use))
	}
	return append(b, '}')
}

// appendOpt appends an omitempty string field.
func (sc *kernelScratch) appendOpt(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return sc.appendString(append(b, key...), v)
}

// appendString appends s quoted as encoding/json quotes it without HTML
// escaping: printable ASCII as is, anything else by encoding/json itself.
func (sc *kernelScratch) appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7f || c == '"' || c == '\\' {
			return sc.appendJSON(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSON appends v as Marshal encodes it, compact.
func (sc *kernelScratch) appendJSON(b []byte, v any) []byte {
	if sc.enc == nil {
		sc.enc = json.NewEncoder(&sc.tmp)
		sc.enc.SetEscapeHTML(false)
	}
	sc.tmp.Reset()
	if err := sc.enc.Encode(v); err != nil {
		sc.failed = true
		return b
	}
	return append(b, strings.TrimSuffix(sc.tmp.String(), "\n")...)
}
