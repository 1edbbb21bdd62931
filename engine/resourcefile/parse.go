package resourcefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/fgtop/fgtop/model"
)

// ParseOptions tunes Parse.
type ParseOptions struct {
	// AllowTorn reads an empty file, or one whose last line has no "\n",
	// exactly as Backend.AI would, instead of reporting it as torn.
	AllowTorn bool
}

// Parse reads a resource.txt with Backend.AI's reader semantics (see the
// package documentation), types being the agent's known_slot_types. An
// empty file or one without a final "\n" is reported as torn. Errors are
// *ParseError.
func Parse(data []byte, types model.SlotTypes) (*Spec, error) {
	return ParseOptions{}.Parse(data, types)
}

// ReadFile reads and parses the resource.txt at path. File-system errors
// are wrapped (errors.Is(err, fs.ErrNotExist) works); parse errors are
// *ParseError with File set.
func ReadFile(path string, types model.SlotTypes) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading resource file: %w", err)
	}
	spec, err := Parse(data, types)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.File = path
		}
		return nil, err
	}
	return spec, nil
}

// Parse is Parse with options.
func (o ParseOptions) Parse(data []byte, types model.SlotTypes) (*Spec, error) {
	if !o.AllowTorn {
		if len(data) == 0 {
			return nil, &ParseError{Kind: "Torn", Msg: "empty file (still being written?)", Torn: true}
		}
		if data[len(data)-1] != '\n' {
			return nil, &ParseError{Line: bytes.Count(data, []byte{'\n'}) + 1, Kind: "Torn",
				Msg: "the last line has no newline (still being written?)", Torn: true}
		}
	}
	if !utf8.Valid(data) {
		return nil, utf8Error(data)
	}
	return parseText(string(data), types)
}

// utf8Error reports the first byte that is not UTF-8, the way the agent's
// text-mode read would fail on it.
func utf8Error(data []byte) *ParseError {
	i := 0
	for i < len(data) {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	return &ParseError{
		Line: bytes.Count(data[:i], []byte{'\n'}) + 1,
		Kind: "UnicodeDecodeError",
		Msg:  fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d", data[i], i),
	}
}

// kv is one key of the file: the value and line of its last appearance.
type kv struct {
	key, val string
	line     int
}

// share is one parsed *_SHARES entry.
type share struct {
	id  model.DeviceID
	amt model.Dec
}

// slotShares is one slot's entries, shares[start:end].
type slotShares struct {
	slot       model.SlotName
	device     string
	start, end int
}

const sharesSuffix = "_SHARES"

func parseText(text string, types model.SlotTypes) (*Spec, error) {
	// Split on "\n" only and keep each key's first position with its last
	// value, as the Python dict does.
	var kvBuf [32]kv
	kvs := kvBuf[:0]
	var index map[string]int
	line := 0
	for pos := 0; pos <= len(text); {
		line++
		l := text[pos:]
		if n := strings.IndexByte(l, '\n'); n >= 0 {
			l = l[:n]
			pos += n + 1
		} else {
			pos = len(text) + 1
		}
		if strings.IndexByte(l, '=') < 0 {
			continue
		}
		l = stripLine(l)
		eq := strings.IndexByte(l, '=')
		k, v := l[:eq], l[eq+1:]
		if i, ok := findKey(kvs, &index, k); ok {
			kvs[i].val, kvs[i].line = v, line
			continue
		}
		kvs = append(kvs, kv{key: k, val: v, line: line})
	}

	spec := &Spec{Types: types}
	mountsAt, scratchAt, slotsAt, unifiedAt := -1, -1, -1, -1
	nExtra := 0
	var sharesBuf [64]share
	shares := sharesBuf[:0]
	var slotBuf [8]slotShares
	slots := slotBuf[:0]
	for i := range kvs {
		switch k := kvs[i].key; k {
		case "MOUNTS":
			mountsAt = i
		case "SCRATCH_SIZE":
			scratchAt = i
		case "SLOTS":
			slotsAt = i
		case "UNIFIED_DEVICES":
			unifiedAt = i
		case "CID":
			spec.CID = kvs[i].val
		default:
			if !strings.HasSuffix(k, sharesSuffix) {
				nExtra++
				continue
			}
			var err *ParseError
			shares, slots, err = parseShares(&kvs[i], types, shares, slots)
			if err != nil {
				return nil, err
			}
		}
	}

	if mountsAt < 0 {
		return nil, missingKey("MOUNTS")
	}
	mounts, err := parseMounts(&kvs[mountsAt])
	if err != nil {
		return nil, err
	}
	spec.Mounts = mounts

	if scratchAt < 0 {
		return nil, missingKey("SCRATCH_SIZE")
	}
	size, serr := model.ParseFiniteBinarySize(kvs[scratchAt].val)
	if serr != nil {
		return nil, binarySizeError(&kvs[scratchAt], "SCRATCH_SIZE", serr)
	}
	spec.ScratchSize = size

	spec.UnifiedDevices = []any{}
	if unifiedAt >= 0 {
		if v := kvs[unifiedAt].val; v != "" && v != "[]" {
			u, jerr := parseJSONDocument(v)
			if jerr != nil {
				return nil, &ParseError{Line: kvs[unifiedAt].line, Kind: "JSONDecodeError",
					Msg: "UNIFIED_DEVICES: " + jerr.message(v)}
			}
			spec.UnifiedDevices = u
		}
	}

	if slotsAt < 0 {
		return nil, missingKey("SLOTS")
	}
	spaced, perr := parseSlots(&kvs[slotsAt], spec)
	if perr != nil {
		return nil, perr
	}
	spec.Legacy = spaced || len(kvs) > 0 && kvs[0].key == "CID"

	buildAlloc(spec, shares, slots)
	if nExtra > 0 {
		spec.Extra = make([]KV, 0, nExtra)
		for i := range kvs {
			switch k := kvs[i].key; k {
			case "MOUNTS", "SCRATCH_SIZE", "SLOTS", "UNIFIED_DEVICES", "CID":
			default:
				if !strings.HasSuffix(k, sharesSuffix) {
					spec.Extra = append(spec.Extra, KV{Key: k, Value: kvs[i].val})
				}
			}
		}
	}
	return spec, nil
}

// stripLine is str.strip(), with a shortcut for the usual line that starts
// and ends with a visible ASCII character.
func stripLine(l string) string {
	if l != "" {
		if a, z := l[0], l[len(l)-1]; a > ' ' && a < utf8.RuneSelf && z > ' ' && z < utf8.RuneSelf {
			return l
		}
	}
	return model.TrimPySpace(l)
}

// findKey finds k among kvs, indexing them in a map once there are many
// (a hostile file can have thousands of keys).
func findKey(kvs []kv, index *map[string]int, k string) (int, bool) {
	if *index == nil {
		if len(kvs) < 32 {
			for i := range kvs {
				if kvs[i].key == k {
					return i, true
				}
			}
			return 0, false
		}
		*index = make(map[string]int, 2*len(kvs))
		for i := range kvs {
			(*index)[kvs[i].key] = i
		}
	}
	i, ok := (*index)[k]
	if !ok {
		(*index)[k] = len(kvs)
	}
	return i, ok
}

func missingKey(k string) *ParseError {
	return &ParseError{Kind: "KeyError", Msg: fmt.Sprintf("'%s' (the file has no %s= line)", k, k)}
}

func binarySizeError(e *kv, what string, err error) *ParseError {
	kind, msg := "ValueError", err.Error()
	var be *model.BinarySizeError
	if errors.As(err, &be) {
		kind, msg = be.Kind, be.Msg
	}
	return &ParseError{Line: e.line, Kind: kind, Msg: fmt.Sprintf("%s %q: %s", what, truncate(e.val), msg)}
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// parseShares reads one *_SHARES line: the slot is the key without the
// suffix, lower-cased; entries split on "," then at the first ":"; empty
// ids or amounts are skipped; a repeated id keeps its first position and
// takes the later amount. A slot already seen keeps its position and takes
// this line's entries.
func parseShares(e *kv, types model.SlotTypes, shares []share, slots []slotShares) ([]share, []slotShares, *ParseError) {
	slot := slotNameFromKey(e.key[:len(e.key)-len(sharesSuffix)])
	isBytes := types[slot] == model.SlotTypeBytes
	start := len(shares)
	var ids map[model.DeviceID]int
	rest := e.val
	for {
		entry := rest
		last := true
		if n := strings.IndexByte(rest, ','); n >= 0 {
			entry, rest, last = rest[:n], rest[n+1:], false
		}
		if c := strings.IndexByte(entry, ':'); c > 0 && c < len(entry)-1 {
			raw := entry[c+1:]
			var amt model.Dec
			var err error
			if isBytes {
				amt, err = model.ParseBinarySize(raw)
			} else {
				amt, err = model.ParseDec(raw)
			}
			if err != nil {
				return nil, nil, shareError(e, entry[:c], raw, err)
			}
			id := internID(entry[:c])
			if i, ok := findID(shares[start:], &ids, id); ok {
				shares[start+i].amt = amt
			} else {
				shares = append(shares, share{id: id, amt: amt})
			}
		}
		if last {
			break
		}
	}
	for i := range slots {
		if slots[i].slot == slot {
			slots[i].start, slots[i].end = start, len(shares)
			return shares, slots, nil
		}
	}
	device, _, _ := strings.Cut(string(slot), ".")
	return shares, append(slots, slotShares{slot: slot, device: device, start: start, end: len(shares)}), nil
}

func findID(s []share, index *map[model.DeviceID]int, id model.DeviceID) (int, bool) {
	if *index == nil {
		if len(s) < 16 {
			for i := range s {
				if s[i].id == id {
					return i, true
				}
			}
			return 0, false
		}
		*index = make(map[model.DeviceID]int, 2*len(s))
		for i := range s {
			(*index)[s[i].id] = i
		}
	}
	i, ok := (*index)[id]
	if !ok {
		(*index)[id] = len(s)
	}
	return i, ok
}

func shareError(e *kv, id, raw string, err error) *ParseError {
	var be *model.BinarySizeError
	if errors.As(err, &be) {
		return &ParseError{Line: e.line, Kind: be.Kind,
			Msg: fmt.Sprintf("%s: device %q: size %q: %s", e.key, truncate(id), truncate(raw), be.Msg)}
	}
	return &ParseError{Line: e.line, Kind: "InvalidOperation",
		Msg: fmt.Sprintf("%s: device %q: %q is not a decimal ([<class 'decimal.ConversionSyntax'>])", e.key, truncate(id), truncate(raw))}
}

// buildAlloc fills Alloc, AllocOrder and DeviceOrder, grouping the slots
// by device in the order Python's nested dicts iterate them.
func buildAlloc(spec *Spec, shares []share, slots []slotShares) {
	spec.Alloc = make(model.Allocations, len(slots))
	spec.AllocOrder = make([]model.SlotName, 0, len(slots))
	spec.DeviceOrder = make(map[model.SlotName][]model.DeviceID, len(slots))
	n := 0
	for _, s := range slots {
		n += s.end - s.start
	}
	ids := make([]model.DeviceID, 0, n)
	done := make([]bool, len(slots))
	for i := range slots {
		if done[i] {
			continue
		}
		for j := i; j < len(slots); j++ {
			if done[j] || slots[j].device != slots[i].device {
				continue
			}
			done[j] = true
			s := slots[j]
			m := make(map[model.DeviceID]model.Dec, s.end-s.start)
			first := len(ids)
			for _, sh := range shares[s.start:s.end] {
				m[sh.id] = sh.amt
				ids = append(ids, sh.id)
			}
			spec.Alloc[s.slot] = m
			spec.AllocOrder = append(spec.AllocOrder, s.slot)
			spec.DeviceOrder[s.slot] = ids[first:len(ids):len(ids)]
		}
	}
}

func parseMounts(e *kv) ([]Mount, *ParseError) {
	v := e.val
	if v == "" {
		return []Mount{}, nil
	}
	out := make([]Mount, 0, strings.Count(v, ",")+1)
	for {
		entry, rest, more := strings.Cut(v, ",")
		if entry != "" {
			m, msg := parseMount(entry)
			if msg != "" {
				return nil, &ParseError{Line: e.line, Kind: "ValueError", Msg: fmt.Sprintf("MOUNTS entry %q: %s", truncate(entry), msg)}
			}
			out = append(out, m)
		}
		if !more {
			return out, nil
		}
		v = rest
	}
}

// slotNameFromKey is SlotName(key.lower()), interned so that the spec
// does not keep the file's text alive.
func slotNameFromKey(k string) model.SlotName {
	var buf [48]byte
	if len(k) <= len(buf) {
		ascii := true
		for i := 0; i < len(k); i++ {
			c := k[i]
			if c >= utf8.RuneSelf {
				ascii = false
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		if ascii {
			return internSlot(buf[:len(k)])
		}
	}
	return model.SlotName(pyLower(strings.Clone(k)))
}

// internSlot returns the well-known slot names without allocating.
func internSlot(b []byte) model.SlotName {
	switch string(b) {
	case "cpu":
		return model.SlotCPU
	case "mem":
		return model.SlotMem
	case "cuda.shares":
		return model.SlotCUDAShares
	case "cuda.device":
		return model.SlotCUDADevice
	case "cuda.mem":
		return "cuda.mem"
	case "cuda.smp":
		return "cuda.smp"
	case "rocm.device":
		return "rocm.device"
	case "tpu.device":
		return "tpu.device"
	}
	return model.SlotName(b)
}

// internSlotString is internSlot for a string, copying names it does not
// know.
func internSlotString(s string) model.SlotName {
	switch s {
	case "cpu":
		return model.SlotCPU
	case "mem":
		return model.SlotMem
	case "cuda.shares":
		return model.SlotCUDAShares
	case "cuda.device":
		return model.SlotCUDADevice
	}
	return model.SlotName(strings.Clone(s))
}

// smallIDs are the device ids "0".."255" (CPU cores, cuda_open GPUs).
var smallIDs = func() (t [256]model.DeviceID) {
	for i := range t {
		t[i] = model.DeviceID(fmt.Sprint(i))
	}
	return t
}()

// internID returns common device ids without allocating and copies the
// others, so the spec does not keep the file's text alive.
func internID(s string) model.DeviceID {
	switch {
	case s == "root":
		return "root"
	case len(s) == 1 && s[0] >= '0' && s[0] <= '9':
		return smallIDs[s[0]-'0']
	case len(s) <= 3 && s[0] >= '1' && s[0] <= '9':
		v := 0
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return model.DeviceID(strings.Clone(s))
			}
			v = v*10 + int(c-'0')
		}
		if v < len(smallIDs) {
			return smallIDs[v]
		}
	}
	return model.DeviceID(strings.Clone(s))
}
