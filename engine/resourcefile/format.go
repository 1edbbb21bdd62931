package resourcefile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/fgtop/fgtop/model"
)

// Format returns the file the agent writes for s: write_to_string's lines
// (SCRATCH_SIZE in "m" units, MOUNTS, SLOTS as compact JSON of the
// str(Decimal) values in SlotOrder, UNIFIED_DEVICES, one *_SHARES line per
// slot in AllocOrder with "bytes" slots as auto-scaled binary sizes), then
// the Extra lines and CID last, as the agent appends it. Every line ends
// with "\n".
//
// Where Backend.AI's writer would raise on a parsed spec (see
// FormatStrict), Format still writes the value in a form its reader takes
// back: UNIFIED_DEVICES as the JSON it holds, a size as plain bytes (or
// "<d.ddd>E+<n> b" past Python's 4300-digit int limit), an infinite size
// as "inf". (A hand-built spec can hold sizes no file can: a NaN or
// negative-infinite one is written as "nan" or "-inf", which the reader
// rejects.)
func (s *Spec) Format() []byte {
	b, _ := s.format(false)
	return b
}

// FormatStrict is Format with Backend.AI's writer failures reported as a
// *FormatError naming the Python exception write_to_string raises:
// TypeError or ValueError for UNIFIED_DEVICES that is not a list of
// pairs, OverflowError for an infinite bytes amount, IndexError for one of
// 1024^9 bytes or more, InvalidOperation for a scratch size beyond 28
// digits of MiB.
func (s *Spec) FormatStrict() ([]byte, error) {
	return s.format(true)
}

func (s *Spec) format(strict bool) ([]byte, error) {
	// write_to_string builds the MOUNTS, SLOTS and UNIFIED_DEVICES strings
	// before SCRATCH_SIZE and the shares; that order decides which error
	// it reports first.
	pairs, ferr := unifiedPairsStrict(s.UnifiedDevices)
	if ferr != nil && strict {
		return nil, ferr
	}
	scratch, err := model.FormatBinarySizeSpec(s.ScratchSize, "m")
	if err != nil {
		if strict {
			return nil, formatError(err)
		}
		scratch = sizeFallback(s.ScratchSize)
	}

	b := make([]byte, 0, 1024)
	b = append(b, "SCRATCH_SIZE="...)
	b = append(b, scratch...)
	b = append(b, "\nMOUNTS="...)
	for i, m := range s.Mounts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.Source...)
		b = append(b, ':')
		b = append(b, m.Target...)
		b = append(b, ':')
		b = append(b, m.Permission...)
	}
	b = append(b, "\nSLOTS={"...)
	for i, k := range orderedKeys(s.SlotOrder, s.Slots) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, string(k))
		b = append(b, ':')
		b = appendJSONString(b, s.Slots[k].String())
	}
	b = append(b, "}\nUNIFIED_DEVICES="...)
	if ferr == nil {
		b = appendJSON(b, pairs)
	} else {
		b = appendJSON(b, s.UnifiedDevices)
	}
	b = append(b, '\n')

	for _, slot := range s.writeOrder() {
		b = append(b, pyUpper(string(slot))...)
		b = append(b, "_SHARES="...)
		isBytes := s.Types[slot] == model.SlotTypeBytes
		amounts := s.Alloc[slot]
		for i, id := range orderedKeys(s.DeviceOrder[slot], amounts) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, id...)
			b = append(b, ':')
			v := amounts[id]
			if !isBytes {
				b = append(b, v.String()...)
				continue
			}
			size, err := model.FormatBinarySizeSpec(v, "s")
			if err != nil {
				if strict {
					return nil, formatError(err)
				}
				size = sizeFallback(v)
			}
			b = append(b, size...)
		}
		b = append(b, '\n')
	}
	for _, e := range s.Extra {
		b = append(b, e.Key...)
		b = append(b, '=')
		b = append(b, e.Value...)
		b = append(b, '\n')
	}
	if s.CID != "" {
		b = append(b, "CID="...)
		b = append(b, s.CID...)
		b = append(b, '\n')
	}
	return b, nil
}

func formatError(err error) *FormatError {
	if be, ok := err.(*model.BinarySizeError); ok {
		return &FormatError{Kind: be.Kind, Msg: be.Msg}
	}
	return &FormatError{Kind: "ValueError", Msg: err.Error()}
}

// sizeFallback writes a size Python's formatter rejects in a form
// BinarySize.from_str reads back.
func sizeFallback(v model.Dec) string {
	switch {
	case v.IsNaN():
		return "nan"
	case !v.IsFinite() && v.Sign() > 0:
		return "inf"
	case !v.IsFinite():
		return "-inf"
	}
	str := v.String()
	if v.Exponent() != 0 {
		n, err := v.Quantize(0, apd.RoundDown)
		if err != nil {
			return str + " b"
		}
		str = n.String()
	}
	digits := strings.TrimPrefix(str, "-")
	if len(digits) <= 4300 {
		return str
	}
	// Past Python's int() digit limit, write d.dddE+n with a " b" unit,
	// which goes through Decimal instead.
	mant := strings.TrimRight(digits, "0")
	sci := str[:len(str)-len(digits)] + mant[:1]
	if len(mant) > 1 {
		sci += "." + mant[1:]
	}
	return sci + "E+" + strconv.Itoa(len(digits)-1) + " b"
}

// orderedKeys returns the keys of m: those in order first (once each,
// skipping any m lacks), then the rest sorted.
func orderedKeys[K ~string, V any](order []K, m map[K]V) []K {
	if len(order) == len(m) {
		ok := true
		for _, k := range order {
			if _, in := m[k]; !in {
				ok = false
				break
			}
		}
		if ok && (len(order) < 2 || len(order) < 64 && noDup(order)) {
			return order
		}
	}
	out := make([]K, 0, len(m))
	seen := make(map[K]bool, len(m))
	for _, k := range order {
		if _, in := m[k]; in && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	var rest []K
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func noDup[K comparable](s []K) bool {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[i] == s[j] {
				return false
			}
		}
	}
	return true
}

// writeOrder is the order of the *_SHARES lines: Alloc's slots in
// AllocOrder, grouped by device as Python's nested dict iterates them.
func (s *Spec) writeOrder() []model.SlotName {
	order := orderedKeys(s.AllocOrder, s.Alloc)
	grouped := make([]model.SlotName, 0, len(order))
	byDevice := make(map[model.DeviceName][]model.SlotName)
	var devices []model.DeviceName
	for _, slot := range order {
		d := slot.DeviceName()
		if _, ok := byDevice[d]; !ok {
			devices = append(devices, d)
		}
		byDevice[d] = append(byDevice[d], slot)
	}
	for _, d := range devices {
		grouped = append(grouped, byDevice[d]...)
	}
	return grouped
}

// unifiedPairsStrict iterates UNIFIED_DEVICES the way write_to_string
// does, unpacking each element into (device, slot): a string iterates its
// characters, a dict its keys.
func unifiedPairsStrict(v any) ([]any, *FormatError) {
	items, ferr := pyIter(v, func(name string) string { return fmt.Sprintf("'%s' object is not iterable", name) })
	if ferr != nil {
		return nil, &FormatError{Kind: "TypeError", Msg: ferr.Msg}
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		pair, ferr := pyIter(it, func(name string) string { return fmt.Sprintf("cannot unpack non-iterable %s object", name) })
		if ferr != nil {
			return nil, &FormatError{Kind: "TypeError", Msg: ferr.Msg}
		}
		switch {
		case len(pair) < 2:
			return nil, &FormatError{Kind: "ValueError", Msg: fmt.Sprintf("not enough values to unpack (expected 2, got %d)", len(pair))}
		case len(pair) > 2:
			return nil, &FormatError{Kind: "ValueError", Msg: "too many values to unpack (expected 2)"}
		}
		out = append(out, pair)
	}
	return out, nil
}

// pyIter lists what Python's iter() yields for a decoded JSON value.
func pyIter(v any, notIterable func(string) string) ([]any, *FormatError) {
	switch t := v.(type) {
	case []any:
		return t, nil
	case string:
		out := make([]any, 0, utf8.RuneCountInString(t))
		for _, r := range t {
			out = append(out, string(r))
		}
		return out, nil
	case Object:
		out := make([]any, len(t))
		for i, m := range t {
			out[i] = m.Key
		}
		return out, nil
	}
	return nil, &FormatError{Msg: notIterable(pyTypeName(v))}
}
