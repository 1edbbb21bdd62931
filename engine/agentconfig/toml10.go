package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// agentText is the file as the agent reads it: Path.read_text() translates
// every line end (CRLF, and a bare CR) to "\n" before the TOML parser sees
// it, so a file with CR line ends loads.
func agentText(raw []byte) []byte {
	if bytes.IndexByte(raw, '\r') < 0 {
		return raw
	}
	out := bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(out, []byte("\r"), []byte("\n"))
}

// toml10 reports what go-toml accepts but TOML 1.0, which the agent's
// parser (Python's tomllib) implements, refuses: escapes other than \b \t
// \n \f \r \" \\ \uXXXX \UXXXXXXXX (TOML 1.1 adds \e and \xHH), and a
// trailing comma or a line break inside an inline table. It returns the
// 1-based line of the first one.
func toml10(raw []byte) (int, error) {
	line := 1
	var stack []byte // '{' inline table, '[' array or header
	var last byte    // last significant byte outside strings and comments
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '\n':
			if len(stack) > 0 && stack[len(stack)-1] == '{' {
				return line, errors.New("a line break inside an inline table { ... } (TOML 1.0 keeps an inline table on one line)")
			}
			line++
			continue
		case '#':
			for i < len(raw) && raw[i] != '\n' {
				i++
			}
			i--
			continue
		case '"', '\'':
			multi := bytes.HasPrefix(raw[i:], []byte{c, c, c})
			end, lines, err := skipString(raw, i, c, multi)
			if err != nil {
				return line + lines, err
			}
			line += lines
			i = end
			last = c
			continue
		case '{', '[':
			stack = append(stack, c)
		case '}':
			if len(stack) > 0 && stack[len(stack)-1] == '{' && last == ',' {
				return line, errors.New("a trailing comma before } in an inline table (TOML 1.0 does not allow it)")
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ' ', '\t', '\r':
			continue
		}
		last = c
	}
	return 0, nil
}

// skipString finds the end of the string starting at raw[i] (quote q,
// multi-line when multi) and checks its escapes. It returns the offset of
// the closing quote's last byte and the line breaks inside.
func skipString(raw []byte, i int, q byte, multi bool) (int, int, error) {
	lines := 0
	j := i + 1
	if multi {
		j = i + 3
	}
	for j < len(raw) {
		c := raw[j]
		switch {
		case c == '\n':
			if !multi {
				return j, lines, errors.New("a line break inside a one-line string")
			}
			lines++
		case c == q && (!multi || bytes.HasPrefix(raw[j:], []byte{q, q, q})):
			if !multi {
				return j, lines, nil
			}
			// Up to two more quotes may belong to the string.
			k := j + 3
			for k < len(raw) && raw[k] == q && k < j+5 {
				k++
			}
			return k - 1, lines, nil
		case c == '\\' && q == '"':
			j++
			if j >= len(raw) {
				return j, lines, errors.New("a string ends in a backslash")
			}
			switch e := raw[j]; e {
			case 'b', 't', 'n', 'f', 'r', '"', '\\':
			case 'u', 'U':
				n := 4
				if e == 'U' {
					n = 8
				}
				j += n
			case ' ', '\t', '\r', '\n':
				if !multi {
					return j, lines, fmt.Errorf("an escape \\%q that TOML 1.0 does not have", e)
				}
				if e == '\n' {
					lines++
				}
			default:
				return j, lines, fmt.Errorf("the escape \\%c, which TOML 1.0 does not have (write the character itself, or \\u%04X)", e, e)
			}
		}
		j++
	}
	return j, lines, errors.New("a string that is never closed")
}

// decodeAgentTOML decodes the file as the agent reads it. Python's TOML
// parser takes integers of any size and floats beyond float64 (as ±inf);
// go-toml refuses both, so such a literal is replaced, for the decoding
// only, by the nearest value go-toml holds (±(2^63-1), ±inf), which every
// bound and check of the agent treats the same way.
func decodeAgentTOML(text []byte) (map[string]any, error) {
	for range 64 {
		var doc map[string]any
		err := toml.Unmarshal(text, &doc)
		if err == nil {
			return doc, nil
		}
		var de *toml.DecodeError
		if !errors.As(err, &de) {
			return nil, err
		}
		msg := de.Error()
		big := strings.Contains(msg, "too large to fit")
		huge := strings.Contains(msg, "value out of range")
		if !big && !huge {
			return nil, err
		}
		row, col := de.Position()
		start := lineOffset(text, row) + col - 1
		if start < 0 || start >= len(text) {
			return nil, err
		}
		end := start
		for end < len(text) && strings.IndexByte("+-0123456789_.eExXoObBabcdfABCDF", text[end]) >= 0 {
			end++
		}
		lit := string(text[start:end])
		repl := "9223372036854775807"
		if huge {
			repl = "inf"
		}
		if strings.HasPrefix(lit, "-") {
			repl = "-" + repl
		}
		if end == start {
			return nil, err
		}
		text = append(append(slices.Clone(text[:start]), repl...), text[end:]...)
	}
	return nil, errors.New("too many out-of-range numbers")
}

// lineOffset is the offset of the start of 1-based line row.
func lineOffset(text []byte, row int) int {
	off := 0
	for r := 1; r < row; r++ {
		i := bytes.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	return off
}
