package resourcefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/fgtop/fgtop/model"
)

// ParseOptions tunes Parse.
type ParseOptions struct {
	// AllowTorn reads an empty file, or one whose last line has no "\n",
	// exactly as Backend.AI would, instead of reporting it as torn.
	AllowTorn bool
	// FiguresOnly leaves out what only the writer needs: Mounts, Extra
	// and DeviceOrder stay empty (MOUNTS is still checked as
	// Backend.AI checks it). Those hold most of a file's bytes, so a
	// caller that only wants the figures (Slots, Alloc, UnifiedDevices)
	// saves copying them. CID is kept: it names the kernel's container,
	// which GPU processes are mapped by.
	FiguresOnly bool
	// Shared, when set, is shared by the specs parsed with it: one copy of
	// each device id and slot name, and the values of repeated lines (see
	// Shared). A caller that holds many specs (the engine: one GPU id and
	// a few presets in thousands of files) keeps each once. Without it
	// every spec has its own copies.
	Shared *Shared
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
			// Bytes that are not text in the lines before the last are
			// not a write still under way: say what they are.
			if whole := data[:bytes.LastIndexByte(data, '\n')+1]; !utf8.Valid(whole) {
				return nil, utf8Error(whole)
			}
			return nil, &ParseError{Line: bytes.Count(data, []byte{'\n'}) + 1, Kind: "Torn",
				Msg: "the last line has no newline (still being written?)", Torn: true}
		}
	}
	if !utf8.Valid(data) {
		return nil, utf8Error(data)
	}
	// The text is a view of data, not a copy: nothing the spec keeps may
	// point into it (data belongs to the caller, who may reuse it). What
	// the spec keeps is copied or interned on the way out.
	return parseText(unsafe.String(unsafe.SliceData(data), len(data)), data, types, &o)
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
		Msg:  fmt.Sprintf("byte 0x%02x at offset %d is not UTF-8", data[i], i),
	}
}

// kv is one key of the file: the value and line of its last appearance.
type kv struct {
	key, val string
	line     int
	valOff   int // offset of val in the text
}

// share is one parsed *_SHARES entry; id points into the file's text
// until internIDs replaces it (and sets common for a shared constant).
type share struct {
	id     string
	amt    model.Dec
	common bool
}

// slotShares is one slot's entries, shares[start:end], parsed from val;
// or, when m is set, the map a Shared already holds for the same line.
type slotShares struct {
	slot       model.SlotName
	device     string
	start, end int
	bytes      bool   // the amounts are binary sizes
	val        string // the line's value, a view of the text (never kept)
	m          map[model.DeviceID]model.Dec
}

const sharesSuffix = "_SHARES"

// emptyList is UnifiedDevices when the line is missing, empty or "[]". It
// is shared: boxing a fresh []any{} would allocate for every file.
var emptyList any = []any{}

// parseText parses text; data holds the same bytes, for word-at-a-time
// scans. Strings taken from text must be copied before the spec keeps
// them.
func parseText(text string, data []byte, types model.SlotTypes, o *ParseOptions) (*Spec, error) {
	figuresOnly := o.FiguresOnly
	// Split on "\n" only and keep each key's first position with its last
	// value, as the Python dict does.
	var kvBuf [20]kv
	kvs := kvBuf[:0]
	var index map[string]int
	line := 0
	for pos := 0; pos <= len(text); {
		line++
		start := pos
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
		l, lead := stripLine(l)
		eq := strings.IndexByte(l, '=')
		k, v := l[:eq], l[eq+1:]
		off := start + lead + eq + 1
		if i, ok := indexOf(kvs, &index, k, func(e kv) string { return e.key }); ok {
			kvs[i].val, kvs[i].line, kvs[i].valOff = v, line, off
			continue
		}
		kvs = append(kvs, kv{key: k, val: v, line: line, valOff: off})
	}

	spec := &Spec{Types: types}
	var arena model.DecArena
	mountsAt, scratchAt, slotsAt, unifiedAt, cidAt := -1, -1, -1, -1, -1
	nExtra := 0
	var sharesBuf [24]share
	shares := sharesBuf[:0]
	var slotBuf [8]slotShares
	slots := slotBuf[:0]
	var slotIndex map[model.SlotName]int
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
			cidAt = i
		default:
			if !strings.HasSuffix(k, sharesSuffix) {
				nExtra++
				continue
			}
			var err *ParseError
			shares, slots, err = parseShares(&kvs[i], types, o.Shared, figuresOnly, &arena, shares, slots, &slotIndex)
			if err != nil {
				return nil, err
			}
		}
	}

	if mountsAt < 0 {
		return nil, missingKey("MOUNTS")
	}
	mounts, err := parseMounts(&kvs[mountsAt], data, !figuresOnly)
	if err != nil {
		return nil, err
	}
	if !figuresOnly {
		spec.Mounts = mounts
	}

	if scratchAt < 0 {
		return nil, missingKey("SCRATCH_SIZE")
	}
	size, serr := model.ParseFiniteBinarySize(kvs[scratchAt].val)
	if serr != nil {
		return nil, binarySizeError(&kvs[scratchAt], "SCRATCH_SIZE", serr)
	}
	spec.ScratchSize = size

	spec.UnifiedDevices = emptyList
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
	spaced, perr := parseSlots(&kvs[slotsAt], spec, &arena, o.Shared)
	if perr != nil {
		return nil, perr
	}
	spec.Legacy = spaced || len(kvs) > 0 && kvs[0].key == "CID"

	buildAlloc(spec, shares, slots, !figuresOnly, o.Shared)
	if !figuresOnly {
		keepWriterLines(spec, kvs, nExtra)
	} else if cidAt >= 0 {
		spec.CID = strings.Clone(kvs[cidAt].val)
	}
	return spec, nil
}

// keepWriterLines copies CID and the Extra lines (keys once, in
// first-appearance order, with their last values) into one string.
func keepWriterLines(spec *Spec, kvs []kv, nExtra int) {
	extra := func(k string) bool {
		switch k {
		case "MOUNTS", "SCRATCH_SIZE", "SLOTS", "UNIFIED_DEVICES":
			return false
		}
		return !strings.HasSuffix(k, sharesSuffix)
	}
	n := 0
	for i := range kvs {
		if extra(kvs[i].key) {
			n += len(kvs[i].key) + len(kvs[i].val)
		}
	}
	var b strings.Builder
	b.Grow(n)
	for i := range kvs {
		if extra(kvs[i].key) {
			b.WriteString(kvs[i].key)
			b.WriteString(kvs[i].val)
		}
	}
	kept := b.String()
	take := func(l int) string {
		s := kept[:l]
		kept = kept[l:]
		return s
	}
	if nExtra > 0 {
		spec.Extra = make([]KV, 0, nExtra)
	}
	for i := range kvs {
		if k := kvs[i].key; extra(k) {
			key, val := take(len(k)), take(len(kvs[i].val))
			if k == "CID" {
				spec.CID = val
				continue
			}
			spec.Extra = append(spec.Extra, KV{Key: key, Value: val})
		}
	}
}

// stripLine is str.strip(), with a shortcut for the usual line that starts
// and ends with a visible ASCII character; lead is how many bytes it
// removed at the front.
func stripLine(l string) (s string, lead int) {
	if l != "" {
		if a, z := l[0], l[len(l)-1]; a > ' ' && a < utf8.RuneSelf && z > ' ' && z < utf8.RuneSelf {
			return l, 0
		}
	}
	for lead < len(l) {
		r, n := utf8.DecodeRuneInString(l[lead:])
		if !model.IsPySpace(r) {
			break
		}
		lead += n
	}
	return model.TrimPySpace(l[lead:]), lead
}

func missingKey(k string) *ParseError {
	return &ParseError{Kind: "KeyError", Msg: fmt.Sprintf("the file has no %s= line", k)}
}

func binarySizeError(e *kv, what string, err error) *ParseError {
	kind, msg := "ValueError", err.Error()
	var be *model.BinarySizeError
	if errors.As(err, &be) {
		kind, msg = be.Kind, be.Reason()
	}
	return &ParseError{Line: e.line, Kind: kind, Msg: fmt.Sprintf("%s %q: %s", what, truncate(e.val), msg)}
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// parseShares reads one *_SHARES line into shares and slots: the slot is
// the key without the suffix, lower-cased; entries split on "," then at
// the first ":"; empty ids or amounts are skipped; a repeated id keeps its
// first position and takes the later amount. A slot already in slots keeps
// its position and takes this line's entries. index is findSlot's.
func parseShares(e *kv, types model.SlotTypes, sh *Shared, figuresOnly bool, arena *model.DecArena, shares []share, slots []slotShares, index *map[model.SlotName]int) ([]share, []slotShares, *ParseError) {
	slot := slotNameFromKey(e.key[:len(e.key)-len(sharesSuffix)], sh)
	isBytes := types[slot] == model.SlotTypeBytes
	start := len(shares)
	// Only the figures-only parse shares lines: a full parse also
	// records each slot's device order, which the shared map lacks.
	if sh != nil && figuresOnly {
		if m := sh.line(lineKey{slot: slot, bytes: isBytes, val: e.val}); m != nil {
			next := slotShares{slot: slot, start: start, end: start, bytes: isBytes, val: e.val, m: m}
			if i, ok := indexOf(slots, index, slot, func(e slotShares) model.SlotName { return e.slot }); ok {
				next.device = slots[i].device
				slots[i] = next
				return shares, slots, nil
			}
			next.device, _, _ = strings.Cut(string(slot), ".")
			return shares, append(slots, next), nil
		}
	}
	var ids map[string]int
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
				amt, err = arena.ParseBinarySize(raw)
			} else {
				amt, err = arena.ParseDec(raw)
			}
			if err != nil {
				return nil, nil, shareError(e, entry[:c], raw, err)
			}
			id := entry[:c]
			if i, ok := indexOf(shares[start:], &ids, id, func(e share) string { return e.id }); ok {
				shares[start+i].amt = amt
			} else {
				shares = append(shares, share{id: id, amt: amt})
			}
		}
		if last {
			break
		}
	}
	if i, ok := indexOf(slots, index, slot, func(e slotShares) model.SlotName { return e.slot }); ok {
		slots[i].start, slots[i].end = start, len(shares)
		slots[i].bytes, slots[i].val, slots[i].m = isBytes, e.val, nil
		return shares, slots, nil
	}
	device, _, _ := strings.Cut(string(slot), ".")
	return shares, append(slots, slotShares{slot: slot, device: device, start: start, end: len(shares), bytes: isBytes, val: e.val}), nil
}

// findSlot looks a slot up in slots, switching to a map once there are
// many (a hostile file can have thousands). A slot it does not find is
// recorded as the next one.

func shareError(e *kv, id, raw string, err error) *ParseError {
	var be *model.BinarySizeError
	if errors.As(err, &be) {
		return &ParseError{Line: e.line, Kind: be.Kind,
			Msg: fmt.Sprintf("%s: device %q: size %q: %s", e.key, truncate(id), truncate(raw), be.Reason())}
	}
	return &ParseError{Line: e.line, Kind: "InvalidOperation",
		Msg: fmt.Sprintf("%s: device %q: %q is not a decimal", e.key, truncate(id), truncate(raw))}
}

// buildAlloc fills Alloc and AllocOrder (and DeviceOrder, for the
// writer, with withOrder), grouping the slots by device in the order
// Python's nested dicts iterate them.
func buildAlloc(spec *Spec, shares []share, slots []slotShares, withOrder bool, sh *Shared) {
	spec.Alloc = make(model.Allocations, len(slots))
	spec.AllocOrder = make([]model.SlotName, 0, len(slots))
	var ids []model.DeviceID
	if withOrder {
		spec.DeviceOrder = make(map[model.SlotName][]model.DeviceID, len(slots))
		n := 0
		for _, s := range slots {
			n += s.end - s.start
		}
		ids = make([]model.DeviceID, 0, n)
	}
	internIDs(shares, slots, sh)
	var doneBuf [16]bool
	done := doneBuf[:0]
	if len(slots) > len(doneBuf) {
		done = make([]bool, len(slots))
	} else {
		done = doneBuf[:len(slots)]
	}
	var byDevice map[string][]int
	if len(slots) > 16 {
		// Hostile files can have thousands of slots: group through a map.
		byDevice = make(map[string][]int)
		for j, s := range slots {
			byDevice[s.device] = append(byDevice[s.device], j)
		}
	}
	add := func(s slotShares) {
		if s.m != nil {
			spec.Alloc[s.slot] = s.m
			spec.AllocOrder = append(spec.AllocOrder, s.slot)
			return
		}
		m := make(map[model.DeviceID]model.Dec, s.end-s.start)
		first := len(ids)
		for _, sh := range shares[s.start:s.end] {
			m[model.DeviceID(sh.id)] = sh.amt
			if withOrder {
				ids = append(ids, model.DeviceID(sh.id))
			}
		}
		spec.Alloc[s.slot] = m
		spec.AllocOrder = append(spec.AllocOrder, s.slot)
		if sh != nil && !withOrder {
			sh.putLine(lineKey{slot: s.slot, bytes: s.bytes, val: s.val}, m)
		}
		if withOrder {
			spec.DeviceOrder[s.slot] = ids[first:len(ids):len(ids)]
		}
	}
	for i := range slots {
		if done[i] {
			continue
		}
		if byDevice != nil {
			for _, j := range byDevice[slots[i].device] {
				done[j] = true
				add(slots[j])
			}
			continue
		}
		for j := i; j < len(slots); j++ {
			if !done[j] && slots[j].device == slots[i].device {
				done[j] = true
				add(slots[j])
			}
		}
	}
}

// internIDs replaces the device ids of the live entries, which point into
// the file's text, with strings the spec may keep: well-known ids are
// shared constants, the rest come from sh or, without it, are copied into
// one string.
func internIDs(shares []share, slots []slotShares, sh *Shared) {
	n := 0
	for _, s := range slots {
		for k := s.start; k < s.end; k++ {
			switch id, ok := commonID(shares[k].id); {
			case ok:
				shares[k].id, shares[k].common = string(id), true
			case sh != nil:
				shares[k].id, shares[k].common = sh.name(shares[k].id), true
			default:
				n += len(shares[k].id)
			}
		}
	}
	if n == 0 {
		return
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range slots {
		for k := s.start; k < s.end; k++ {
			if !shares[k].common {
				b.WriteString(shares[k].id)
			}
		}
	}
	packed := b.String()
	for _, s := range slots {
		for k := s.start; k < s.end; k++ {
			if !shares[k].common {
				l := len(shares[k].id)
				shares[k].id = packed[:l]
				packed = packed[l:]
			}
		}
	}
}

// parseMounts reads MOUNTS; keep says the result is kept, so its strings
// must not point into the file's text.
func parseMounts(e *kv, data []byte, keep bool) ([]Mount, *ParseError) {
	v := e.val
	if v == "" {
		return []Mount{}, nil
	}
	raw := data[e.valOff : e.valOff+len(v)]
	var out []Mount
	if keep {
		v = strings.Clone(v)
		out = make([]Mount, 0, strings.Count(v, ",")+1)
	}
	if fast, ok := scanMounts(v, raw, out, keep); ok {
		return fast, nil
	}
	for {
		entry, rest, more := strings.Cut(v, ",")
		if entry != "" {
			m, msg := parseMount(entry)
			if msg != "" {
				return nil, &ParseError{Line: e.line, Kind: "ValueError", Msg: fmt.Sprintf("MOUNTS entry %q: %s", truncate(entry), msg)}
			}
			if keep {
				out = append(out, m)
			}
		}
		if !more {
			return out, nil
		}
		v = rest
	}
}

// slotNameFromKey is SlotName(key.lower()), interned so that the spec
// does not keep the file's text alive.
func slotNameFromKey(k string, sh *Shared) model.SlotName {
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
			return internSlot(buf[:len(k)], sh)
		}
	}
	l := pyLower(strings.Clone(k))
	if sh != nil {
		l = sh.name(l)
	}
	return model.SlotName(l)
}

// internSlot returns the well-known slot names without allocating, and the
// others from sh or copied.
func internSlot(b []byte, sh *Shared) model.SlotName {
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
	if sh != nil {
		// A copy, not a view of b: b is the caller's stack buffer, and
		// handing sh a view would move it to the heap on every call.
		return model.SlotName(sh.name(string(b)))
	}
	return model.SlotName(b)
}

// internSlotString is internSlot for a string s that must not be kept.
func internSlotString(s string, sh *Shared) model.SlotName {
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
	if sh != nil {
		return model.SlotName(sh.name(s))
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

// commonID returns the shared constant for "root" and "0".."255".
func commonID(s string) (model.DeviceID, bool) {
	switch {
	case s == "root":
		return "root", true
	case len(s) == 1 && s[0] >= '0' && s[0] <= '9':
		return smallIDs[s[0]-'0'], true
	case len(s) <= 3 && len(s) > 1 && s[0] >= '1' && s[0] <= '9':
		v := 0
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return "", false
			}
			v = v*10 + int(c-'0')
		}
		if v < len(smallIDs) {
			return smallIDs[v], true
		}
	}
	return "", false
}
