package recovery

import (
	"encoding/json"
	"errors"
	"fmt"
)

// A full scan parses one record per kernel (10,000 on a large node), and
// encoding/json spends ~11 µs and 38 allocations on a 1 KB record whose
// three quarters fgtop skips. This scanner validates the whole document as
// strictly as encoding/json does and keeps only the strings fgtop uses, in
// about a tenth of that. FuzzParse holds it to encoding/json's verdicts and
// values.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// scanner walks one JSON document.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) fail(what string) error {
	if s.i >= len(s.b) {
		return ErrTruncated
	}
	return fmt.Errorf("not valid JSON at byte %d: %s", s.i, what)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// token reads a string token and returns what is between its quotes;
// plain says it has no escape and no byte above 0x7f, so that it is its own
// value.
func (s *scanner) token() (raw []byte, plain bool, err error) {
	if s.peek() != '"' {
		return nil, false, s.fail("want a string")
	}
	start := s.i
	s.i++
	plain = true
	for {
		// Most of a record is plain ASCII inside strings: skip it in a
		// tight loop (the profile of a full scan: ~70% of parsing was this
		// loop and ws); the switch below sees only the bytes that matter.
		for s.i < len(s.b) && strPlain[s.b[s.i]] {
			s.i++
		}
		if s.i >= len(s.b) {
			return nil, false, s.fail("unterminated string")
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start+1 : s.i-1], plain, nil
		case c < 0x20:
			return nil, false, s.fail("control character in a string")
		case c == '\\':
			plain = false
			s.i++
			if s.i >= len(s.b) {
				return nil, false, s.fail("unterminated string")
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if s.i+5 > len(s.b) {
					s.i = len(s.b)
					return nil, false, s.fail("unterminated string")
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !isHex(h) {
						return nil, false, s.fail("bad \\u escape")
					}
				}
				s.i += 5
			default:
				return nil, false, s.fail("bad escape")
			}
		default:
			if c >= 0x80 {
				plain = false
			}
			s.i++
		}
	}
}

// strPlain marks the bytes a string may hold as they are: printable ASCII
// other than the quote and the backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// value turns a token into its string (escapes decoded as encoding/json
// decodes them).
func value(raw []byte, plain bool) (string, error) {
	if plain {
		return string(raw), nil
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	var v string
	if err := json.Unmarshal(q, &v); err != nil {
		return "", fmt.Errorf("not valid JSON: %v", err)
	}
	return v, nil
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number skips a number token.
func (s *scanner) number() error {
	at := func() byte {
		if s.i < len(s.b) {
			return s.b[s.i]
		}
		return 0
	}
	if at() == '-' {
		s.i++
	}
	switch {
	case at() == '0':
		s.i++
	case isDigit(at()):
		for isDigit(at()) {
			s.i++
		}
	default:
		return s.fail("bad number")
	}
	if at() == '.' {
		s.i++
		if !isDigit(at()) {
			return s.fail("bad number")
		}
		for isDigit(at()) {
			s.i++
		}
	}
	if c := at(); c == 'e' || c == 'E' {
		s.i++
		if c := at(); c == '+' || c == '-' {
			s.i++
		}
		if !isDigit(at()) {
			return s.fail("bad number")
		}
		for isDigit(at()) {
			s.i++
		}
	}
	return nil
}

func (s *scanner) literal(word string) error {
	if len(s.b)-s.i < len(word) {
		if string(s.b[s.i:]) == word[:len(s.b)-s.i] {
			s.i = len(s.b)
			return s.fail("truncated literal")
		}
		return s.fail("bad literal")
	}
	if string(s.b[s.i:s.i+len(word)]) != word {
		return s.fail("bad literal")
	}
	s.i += len(word)
	return nil
}

// skip validates and skips one value.
func (s *scanner) skip(depth int) error {
	if depth > maxDepth {
		return errors.New("exceeded max depth")
	}
	switch c := s.peek(); {
	case c == '{':
		return s.object(depth, func([]byte) (bool, error) { return false, nil })
	case c == '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			return nil
		}
		for {
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return nil
			default:
				return s.fail("want , or ]")
			}
		}
	case c == '"':
		_, _, err := s.token()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || isDigit(c):
		return s.number()
	default:
		return s.fail("want a value")
	}
}

// object walks an object; field is called with each key, positioned at its
// value, and reports whether it consumed the value (else it is skipped).
func (s *scanner) object(depth int, field func(key []byte) (bool, error)) error {
	if depth+1 > maxDepth {
		return errors.New("exceeded max depth")
	}
	if s.peek() != '{' {
		return s.fail("want an object")
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		key, plain, err := s.token()
		if err != nil {
			return err
		}
		if !plain {
			// An escaped key ("\u0069d") means what it decodes to.
			k, err := value(key, plain)
			if err != nil {
				return err
			}
			key = []byte(k)
		}
		if s.peek() != ':' {
			return s.fail("want :")
		}
		s.i++
		done, err := field(key)
		if err != nil {
			return err
		}
		if !done {
			if err := s.skip(depth + 1); err != nil {
				return err
			}
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail("want , or }")
		}
	}
}

// optString reads a string or null (null gives "", set false). field
// names it in errors: in, then key when in is set.
func (s *scanner) optString(in string, key []byte) (v string, set bool, err error) {
	raw, plain, set, err := s.optToken(in, key)
	if err != nil || !set {
		return "", set, err
	}
	v, err = value(raw, plain)
	return v, true, err
}

// optBytes is optString for a value used only to build another: the
// bytes of data when the string has no escape (no copy), decoded otherwise.
func (s *scanner) optBytes(in string, key []byte) ([]byte, error) {
	raw, plain, set, err := s.optToken(in, key)
	if err != nil || !set || plain {
		return raw, err
	}
	v, err := value(raw, plain)
	return []byte(v), err
}

// optToken reads a string token or null (set false), and fails on any
// other value, naming the field as optString does.
func (s *scanner) optToken(in string, key []byte) (raw []byte, plain, set bool, err error) {
	switch s.peek() {
	case 'n':
		return nil, false, false, s.literal("null")
	case '"':
		raw, plain, err := s.token()
		return raw, plain, true, err
	}
	if err := s.skip(1); err != nil {
		return nil, false, false, err
	}
	field := string(key)
	if in != "" {
		field = in + "." + field
	}
	return nil, false, false, fmt.Errorf("field %q is not a string", field)
}

// objectOrNull reads an object value (or null), calling field for its
// keys as object does.
func (s *scanner) objectOrNull(name string, field func(key []byte) (bool, error)) error {
	switch s.peek() {
	case 'n':
		return s.literal("null")
	case '{':
		return s.object(1, field)
	}
	if err := s.skip(1); err != nil {
		return err
	}
	return fmt.Errorf("field %q is not an object", name)
}

// scanRecord extracts the kept fields; hasID and hasAgent report whether
// id and agent_id were present as strings.
func scanRecord(data []byte) (f fields, err error) {
	s := &scanner{b: data}
	if s.peek() != '{' {
		return f, errors.New("not a JSON object")
	}
	err = s.object(0, func(key []byte) (bool, error) {
		var err error
		switch string(key) {
		case "id":
			f.id, f.hasID, err = s.optString("", key)
		case "agent_id":
			f.agent, f.hasAgent, err = s.optString("", key)
		case "session_type":
			f.sessionType, _, err = s.optString("", key)
		case "image_ref":
			f.image = imageFields{}
			err = s.objectOrNull("image_ref", func(k []byte) (bool, error) {
				// The four parts only make the canonical reference: kept
				// as bytes of data, they cost no allocation each.
				var p *[]byte
				switch string(k) {
				case "name":
					p = &f.image.name
				case "project":
					p = &f.image.project
				case "tag":
					p = &f.image.tag
				case "registry":
					p = &f.image.registry
				case "architecture":
					var err error
					f.image.arch, _, err = s.optString("image_ref", k)
					return true, err
				default:
					return false, nil
				}
				var err error
				*p, err = s.optBytes("image_ref", k)
				return true, err
			})
		case "ownership_data":
			f.owner = ownerFields{}
			err = s.objectOrNull("ownership_data", func(k []byte) (bool, error) {
				var p *string
				switch string(k) {
				case "session_id":
					p = &f.owner.session
				case "owner_user_id":
					p = &f.owner.user
				case "owner_project_id":
					p = &f.owner.project
				default:
					return false, nil
				}
				var err error
				*p, _, err = s.optString("ownership_data", k)
				return true, err
			})
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return f, err
	}
	if s.peek() != 0 {
		return f, errors.New("extra data after the JSON object")
	}
	return f, nil
}

// imageFields: name, project, tag and registry may be sub-slices of the
// parsed data (see optBytes), valid only while it is.
type imageFields struct {
	name, project, tag, registry []byte
	arch                         string
}

type ownerFields struct{ session, user, project string }

type fields struct {
	id, agent, sessionType string
	hasID, hasAgent        bool
	image                  imageFields
	owner                  ownerFields
}
