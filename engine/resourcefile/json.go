package resourcefile

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// This file parses JSON the way Backend.AI's load_json (orjson 3.8, built
// on yyjson) does: strict RFC 8259 (no NaN, comments or trailing commas),
// integers kept exact within [-2^63, 2^64-1] and read as a float64 beyond,
// floats that overflow are an error, objects keep each key's first position
// with its last value (a Python dict), lone surrogate escapes are errors.

// Object is a JSON object as orjson turns it into a Python dict: members in
// the order of each key's first appearance, with the value of its last.
type Object []Member

// Member is one key of an Object.
type Member struct {
	Key   string
	Value any
}

// maxJSONDepth bounds nesting so a hostile file cannot exhaust the stack.
// orjson has no such limit; a deeper document is a JSONDecodeError here.
const maxJSONDepth = 10000

// jsonError is a decode error at byte offset pos of the document.
type jsonError struct {
	msg string
	pos int
}

// message formats the error as orjson does ("msg: line 1 column c (char
// n)", counting characters).
func (e *jsonError) message(doc string) string {
	pos := e.pos
	if pos > len(doc) {
		pos = len(doc)
	}
	n := utf8.RuneCountInString(doc[:pos])
	return fmt.Sprintf("%s: line 1 column %d (char %d)", e.msg, n+1, n)
}

type jsonParser struct {
	s     string
	i     int
	depth int
	// spaced records whitespace after a ',' or ':', the mark of
	// json.dumps-style (pre-24.12) output.
	spaced bool
}

func (p *jsonParser) fail(msg string) *jsonError { return &jsonError{msg: msg, pos: p.i} }

func (p *jsonParser) ws() bool {
	start := p.i
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return p.i > start
		}
	}
	return p.i > start
}

// sep skips whitespace after a separator and notes it.
func (p *jsonParser) sep() {
	if p.ws() {
		p.spaced = true
	}
}

// parseJSONDocument decodes a whole document into nil, bool, int64, uint64,
// float64, string, []any or Object.
func parseJSONDocument(doc string) (any, *jsonError) {
	if doc == "" {
		return nil, &jsonError{msg: "input length is 0"}
	}
	p := jsonParser{s: doc}
	p.ws()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	return v, nil
}

func (p *jsonParser) end() *jsonError {
	p.ws()
	if p.i < len(p.s) {
		return p.fail("unexpected content after document")
	}
	return nil
}

func (p *jsonParser) value() (any, *jsonError) {
	if p.i >= len(p.s) {
		return nil, p.fail("unexpected end of data")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return strings.Clone(s), nil
	case c == 't' || c == 'f' || c == 'n':
		return p.literal()
	case c == '-' || c >= '0' && c <= '9':
		lit, isInt, err := p.number()
		if err != nil {
			return nil, err
		}
		return numberValue(lit, isInt, p)
	}
	return nil, p.fail("unexpected character")
}

func (p *jsonParser) literal() (any, *jsonError) {
	for _, l := range [...]struct {
		word string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if strings.HasPrefix(p.s[p.i:], l.word) {
			p.i += len(l.word)
			return l.v, nil
		}
	}
	return nil, p.fail("invalid literal")
}

// number scans a number literal; isInt is false when it has a fraction or
// an exponent.
func (p *jsonParser) number() (lit string, isInt bool, err *jsonError) {
	s, start := p.s, p.i
	i := p.i
	digit := func(i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }
	if s[i] == '-' {
		i++
		if !digit(i) {
			return "", false, p.fail("no digit after minus sign")
		}
	}
	if s[i] == '0' {
		i++
		if digit(i) {
			p.i = start
			return "", false, p.fail("number with leading zero is not allowed")
		}
	} else {
		for digit(i) {
			i++
		}
	}
	isInt = true
	if i < len(s) && s[i] == '.' {
		isInt = false
		i++
		if !digit(i) {
			p.i = i - 1
			return "", false, p.fail("no digit after decimal point")
		}
		for digit(i) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		isInt = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digit(i) {
			p.i = i - 1
			return "", false, p.fail("no digit after exponent sign")
		}
		for digit(i) {
			i++
		}
	}
	p.i = i
	return s[start:i], isInt, nil
}

// numberValue converts a literal as yyjson/orjson do: int64 or uint64 when
// an integer fits, float64 otherwise.
func numberValue(lit string, isInt bool, p *jsonParser) (any, *jsonError) {
	if isInt {
		if lit[0] == '-' {
			if v, err := strconv.ParseInt(lit, 10, 64); err == nil {
				return v, nil
			}
		} else if v, err := strconv.ParseUint(lit, 10, 64); err == nil {
			if v <= math.MaxInt64 {
				return int64(v), nil
			}
			return v, nil
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && math.IsInf(f, 0) {
		return nil, &jsonError{msg: "number is infinity when parsed as double", pos: p.i - len(lit)}
	}
	return f, nil
}

// str scans a string at p.i (a '"') and returns its content. Without
// escapes the result shares p.s's memory.
func (p *jsonParser) str() (string, *jsonError) {
	s := p.s
	start := p.i + 1
	for i := start; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			p.i = i + 1
			return s[start:i], nil
		case c == '\\':
			return p.strEscaped(start, i)
		case c < 0x20:
			p.i = i
			return "", p.fail("unexpected control character in string")
		}
	}
	p.i = len(s)
	return "", p.fail("unexpected end of data")
}

func (p *jsonParser) strEscaped(start, i int) (string, *jsonError) {
	s := p.s
	var b strings.Builder
	b.WriteString(s[start:i])
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return b.String(), nil
		case c < 0x20:
			p.i = i
			return "", p.fail("unexpected control character in string")
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			p.i = len(s)
			return "", p.fail("unexpected end of data")
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok {
				p.i = i
				return "", p.fail("invalid escaped sequence in string")
			}
			i += 6
			switch {
			case utf16.IsSurrogate(r) && r < 0xDC00:
				r2, ok := rune(0), false
				if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2, ok = hex4(s, i+2)
				}
				if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
					p.i = i
					return "", p.fail("no matched low surrogate in string")
				}
				r = utf16.DecodeRune(r, r2)
				i += 6
			case utf16.IsSurrogate(r):
				p.i = i - 6
				return "", p.fail("invalid high surrogate in string")
			}
			b.WriteRune(r)
			continue
		default:
			p.i = i
			return "", p.fail("invalid escaped character in string")
		}
		i += 2
	}
	p.i = len(s)
	return "", p.fail("unexpected end of data")
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (p *jsonParser) enter() *jsonError {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.fail("nesting deeper than fgtop's limit")
	}
	return nil
}

func (p *jsonParser) array() (any, *jsonError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++
	p.ws()
	out := []any{}
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return out, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of data")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.sep()
		case ']':
			p.i++
			return out, nil
		default:
			return nil, p.fail("unexpected character")
		}
	}
}

func (p *jsonParser) object() (any, *jsonError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	var out Object
	var index map[string]int
	err := p.members(func(key string) *jsonError {
		v, err := p.value()
		if err != nil {
			return err
		}
		if i, ok := indexOf(out, &index, key, func(m Member) string { return m.Key }); ok {
			out[i].Value = v
			return nil
		}
		out = append(out, Member{Key: strings.Clone(key), Value: v})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = Object{}
	}
	return out, nil
}

// members walks an object at p.i (a '{'), calling member with each key
// while p.i sits on the value.
func (p *jsonParser) members(member func(key string) *jsonError) *jsonError {
	p.i++
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return nil
	}
	for {
		if p.i >= len(p.s) {
			return p.fail("unexpected end of data")
		}
		if p.s[p.i] != '"' {
			return p.fail("unexpected character")
		}
		key, err := p.str()
		if err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.s) {
			return p.fail("unexpected end of data")
		}
		if p.s[p.i] != ':' {
			return p.fail("unexpected character")
		}
		p.i++
		p.sep()
		if err := member(key); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.s) {
			return p.fail("unexpected end of data")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.sep()
		case '}':
			p.i++
			return nil
		default:
			return p.fail("unexpected character")
		}
	}
}

// jsonTypeName names a decoded value's JSON type, for messages.
func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int64, uint64, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "a value"
}

// pyTypeName is the Python type orjson gives a decoded value.
func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64, uint64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case Object:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// appendJSON writes v compactly the way orjson.dumps does: no spaces,
// non-ASCII kept as UTF-8, only '"', '\\' and control characters escaped.
func appendJSON(b []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, t)
	case int64:
		return strconv.AppendInt(b, t, 10)
	case uint64:
		return strconv.AppendUint(b, t, 10)
	case float64:
		return appendJSONFloat(b, t)
	case string:
		return appendJSONString(b, t)
	case []any:
		b = append(b, '[')
		for i, x := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, x)
		}
		return append(b, ']')
	case Object:
		b = append(b, '{')
		for i, m := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, m.Key)
			b = append(b, ':')
			b = appendJSON(b, m.Value)
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}

func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONFloat prints the shortest round-trip digits the way orjson
// lays them out: fixed notation with ".0" for decimal exponents -5..15,
// otherwise "1.5e16" / "1e-6" (no "+", no padding).
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expStr)
	if exp < -5 || exp > 15 {
		b = append(b, mant...)
		b = append(b, 'e')
		return strconv.AppendInt(b, int64(exp), 10)
	}
	b = strconv.AppendFloat(b, f, 'f', -1, 64)
	if math.Trunc(f) == f {
		b = append(b, ".0"...)
	}
	return b
}
