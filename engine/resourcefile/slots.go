package resourcefile

import (
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/fgtop/fgtop/model"
)

// slotValue is one member of the SLOTS object before conversion.
type slotValue struct {
	key  string
	kind byte   // 's' string, 'i' int64, 'u' uint64, 'f' float64, 'T'/'F' bool, 'z' null, 'a' array, 'o' object
	raw  string // string content
	i    int64
	u    uint64
	f    float64
	arr  []any
}

// parseSlots is ResourceSlot.from_json(load_json(SLOTS)): the whole
// document must be valid JSON, the top level must be an object (else
// AttributeError, as obj.items() fails), and each value then goes through
// Python's Decimal() in order; null values are dropped. spaced reports
// json.dumps-style whitespace.
func parseSlots(e *kv, spec *Spec, arena *model.DecArena, sh *Shared) (spaced bool, perr *ParseError) {
	doc := e.val
	if sh != nil {
		if v := sh.slotsOf(doc); v != nil {
			spec.Slots, spec.SlotOrder = v.slots, v.order
			return v.spaced, nil
		}
	}
	jsonErr := func(err *jsonError) *ParseError {
		return &ParseError{Line: e.line, Kind: "JSONDecodeError", Msg: "SLOTS: " + err.message(doc)}
	}
	if doc == "" {
		return false, jsonErr(&jsonError{msg: "input length is 0"})
	}
	p := jsonParser{s: doc}
	p.ws()
	if p.i >= len(doc) || doc[p.i] != '{' {
		v, err := p.value()
		if err == nil {
			err = p.end()
		}
		if err != nil {
			return false, jsonErr(err)
		}
		return false, &ParseError{Line: e.line, Kind: "AttributeError",
			Msg: "SLOTS: want a JSON object of slot amounts, found " + jsonTypeName(v)}
	}
	var buf [16]slotValue
	members, err := p.slotMembers(buf[:0])
	if err == nil {
		err = p.end()
	}
	if err != nil {
		return false, jsonErr(err)
	}

	n := 0
	for i := range members {
		if members[i].kind != 'z' {
			n++
		}
	}
	spec.Slots = make(model.ResourceSlot, n)
	spec.SlotOrder = make([]model.SlotName, 0, n)
	for i := range members {
		m := &members[i]
		if m.kind == 'z' {
			continue
		}
		d, kind, msg := m.decimal(arena)
		if kind != "" && m.kind == 'a' {
			msg = "a list is read as a (sign, digits, exponent) decimal: " + msg
		}
		if kind != "" {
			return false, &ParseError{Line: e.line, Kind: kind, Msg: "SLOTS[" + strconv.Quote(truncate(m.key)) + "]: " + msg}
		}
		name := internSlotString(m.key, sh)
		spec.Slots[name] = d
		spec.SlotOrder = append(spec.SlotOrder, name)
	}
	if sh != nil {
		sh.putSlots(doc, &sharedSlots{slots: spec.Slots, order: spec.SlotOrder, spaced: p.spaced})
	}
	return p.spaced, nil
}

// slotMembers reads the object at p.i into out, deduplicating keys as a
// Python dict does.
func (p *jsonParser) slotMembers(out []slotValue) ([]slotValue, *jsonError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	var index map[string]int
	p.i++
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return out, nil
	}
	for {
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of data")
		}
		if p.s[p.i] != '"' {
			return nil, p.fail("unexpected character")
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of data")
		}
		if p.s[p.i] != ':' {
			return nil, p.fail("unexpected character")
		}
		p.i++
		p.sep()
		v := slotValue{key: key}
		if err := p.slotValue(&v); err != nil {
			return nil, err
		}
		if i, ok := indexOf(out, &index, key, func(v slotValue) string { return v.key }); ok {
			v.key = out[i].key
			out[i] = v
		} else {
			out = append(out, v)
		}
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of data")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.sep()
		case '}':
			p.i++
			return out, nil
		default:
			return nil, p.fail("unexpected character")
		}
	}
}

// slotValue scans one value into v without boxing scalars.
func (p *jsonParser) slotValue(v *slotValue) *jsonError {
	if p.i >= len(p.s) {
		return p.fail("unexpected end of data")
	}
	switch c := p.s[p.i]; {
	case c == '"':
		s, err := p.str()
		if err != nil {
			return err
		}
		v.kind, v.raw = 's', s
	case c == '-' || c >= '0' && c <= '9':
		lit, isInt, err := p.number()
		if err != nil {
			return err
		}
		x, err := numberValue(lit, isInt, p)
		if err != nil {
			return err
		}
		switch t := x.(type) {
		case int64:
			v.kind, v.i = 'i', t
		case uint64:
			v.kind, v.u = 'u', t
		case float64:
			v.kind, v.f = 'f', t
		}
	case c == 't' || c == 'f' || c == 'n':
		x, err := p.literal()
		if err != nil {
			return err
		}
		switch x {
		case true:
			v.kind = 'T'
		case false:
			v.kind = 'F'
		default:
			v.kind = 'z'
		}
	case c == '[':
		x, err := p.array()
		if err != nil {
			return err
		}
		v.kind, v.arr = 'a', x.([]any)
	case c == '{':
		if _, err := p.object(); err != nil {
			return err
		}
		v.kind = 'o'
	default:
		return p.fail("unexpected character")
	}
	return nil
}

// decimal is Python's Decimal(value) for a decoded JSON value; kind is the
// exception class on failure.
func (v *slotValue) decimal(arena *model.DecArena) (d model.Dec, kind, msg string) {
	switch v.kind {
	case 's':
		d, err := arena.ParseDec(v.raw)
		if err != nil {
			return model.Dec{}, "InvalidOperation", strconv.Quote(truncate(v.raw)) + " is not a decimal"
		}
		return d, "", ""
	case 'i':
		return model.DecFromInt64(v.i), "", ""
	case 'u':
		return model.DecFromUint64(v.u), "", ""
	case 'f':
		return model.DecFromFloat64(v.f), "", ""
	case 'T':
		return model.One, "", ""
	case 'F':
		return model.Zero, "", ""
	case 'a':
		return decFromSequence(v.arr)
	}
	return model.Dec{}, "TypeError", "an object is not an amount"
}

// pyLong classifies a decoded value as a Python int for the C API's
// PyLong_AsLong: ok is false for non-ints, overflow for ints beyond int64.
func pyLong(x any) (v int64, ok, overflow bool) {
	switch t := x.(type) {
	case bool:
		if t {
			return 1, true, false
		}
		return 0, true, false
	case int64:
		return t, true, false
	case uint64:
		return 0, true, true
	}
	return 0, false, false
}

// decFromSequence is Decimal((sign, digits, exponent)) for a JSON list:
// the checks and their order follow CPython's dectuple_as_str (sign, then
// exponent, then each digit).
func decFromSequence(seq []any) (model.Dec, string, string) {
	const (
		errSign   = "sign must be an integer with the value 0 or 1"
		errDigits = "coefficient must be a tuple of digits"
	)
	if len(seq) != 3 {
		return model.Dec{}, "ValueError", "argument must be a sequence of length 3"
	}
	sign, ok, overflow := pyLong(seq[0])
	switch {
	case !ok:
		return model.Dec{}, "ValueError", errSign
	case overflow:
		return model.Dec{}, "OverflowError", "the sign is too large"
	case sign != 0 && sign != 1:
		return model.Dec{}, "ValueError", errSign
	}
	form := apd.Finite
	var exp int64
	if s, isStr := seq[2].(string); isStr {
		switch s {
		case "F":
			form = apd.Infinite
		case "n":
			form = apd.NaN
		case "N":
			form = apd.NaNSignaling
		default:
			return model.Dec{}, "ValueError", "string argument in the third position must be 'F', 'n' or 'N'"
		}
	} else {
		e, ok, overflow := pyLong(seq[2])
		switch {
		case !ok:
			return model.Dec{}, "ValueError", "exponent must be an integer"
		case overflow:
			return model.Dec{}, "OverflowError", "the exponent is too large"
		}
		exp = e
	}
	list, isList := seq[1].([]any)
	if !isList {
		return model.Dec{}, "ValueError", errDigits
	}
	var digits strings.Builder
	for _, x := range list {
		dv, ok, overflow := pyLong(x)
		switch {
		case !ok:
			return model.Dec{}, "ValueError", errDigits
		case overflow:
			return model.Dec{}, "OverflowError", "the sign is too large"
		case dv < 0 || dv > 9:
			return model.Dec{}, "ValueError", errDigits
		}
		digits.WriteByte(byte('0' + dv))
	}
	d := &apd.Decimal{Form: form, Negative: sign == 1}
	if form == apd.Infinite {
		return model.DecFromApd(d), "", ""
	}
	if c := strings.TrimLeft(digits.String(), "0"); c != "" {
		d.Coeff.SetString(c, 10)
	}
	if form == apd.Finite {
		// Python accepts exponents up to about ±10^18; apd stores an int32.
		if exp > math.MaxInt32 || exp < math.MinInt32 {
			return model.Dec{}, "InvalidOperation", "the exponent is out of range"
		}
		d.Exponent = int32(exp)
	}
	return model.DecFromApd(d), "", ""
}
