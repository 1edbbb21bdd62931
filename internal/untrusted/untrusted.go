// Package untrusted is fgtop's one rule for text that comes from outside:
// resource.txt and recovery.json, etcd settings, NVML, /proc, the
// snapshots of fleet peers, Prometheus labels and answers. Such text may
// carry terminal escape sequences (OSC 52 sets the clipboard, OSC 8 makes
// links, SGR recolours what follows, CR/LF forge rows) or bidirectional
// overrides that make text print in another order than it reads.
//
// Text replaces every such character with a visible escape ("\x1b",
// "\u009b"); it is applied once where a string enters, and again, as a
// guard, where text leaves for a terminal (window titles, plain-text
// output, stderr, the copy action, exporter labels). It is idempotent: a
// string it returned comes back unchanged, so the guard costs a scan.
package untrusted

import (
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Unsafe reports whether r must not reach a terminal as itself: C0
// controls, DEL, C1 controls (U+0080-U+009F: U+009B is CSI to terminals
// that read C1), the line and paragraph separators, and the bidirectional
// marks, embeddings, overrides and isolates.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == '\u061c', r == '\u200e', r == '\u200f', r == '\u2028', r == '\u2029':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// Text returns s with every unsafe character (Unsafe) and every byte
// that is not UTF-8 replaced by a visible escape: "\x1b" for a C0
// control or a stray byte, "\u007f" for DEL, "\u009b" for C1 and the
// other unsafe characters. The \u form is also a valid JSON escape, so
// Text leaves JSON that encoding/json wrote valid (it escapes C0
// itself). A string with nothing to replace is returned as is.
func Text(s string) string { return clean(s, false) }

// Lines is Text for multi-line text: newlines and tabs are kept, every
// other unsafe character is escaped. It is for whole messages and output
// (a check report, an error on stderr), never for a single value.
func Lines(s string) string { return clean(s, true) }

// Safe reports whether Text(s) == s.
func Safe(s string) bool { return firstUnsafe(s, false) < 0 }

func keep(r rune, lines bool) bool { return lines && (r == '\n' || r == '\t') }

// firstUnsafe is the byte offset of the first character to escape, or -1.
func firstUnsafe(s string, lines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < 0x80 {
			if !keep(rune(c), lines) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || Unsafe(r) {
			return i
		}
		i += n
	}
	return -1
}

func clean(s string, lines bool) string {
	i := firstUnsafe(s, lines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < 0x80 {
			switch {
			case c == 0x7f:
				b.WriteString(`\u007f`)
			case c < 0x20 && !keep(rune(c), lines):
				b.WriteString(`\x`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		case Unsafe(r):
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(r>>shift)&0xf])
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// IsUUID reports whether s is a UUID in the canonical form Python's
// str(uuid.UUID) writes and Backend.AI uses for kernel, session, user
// and project ids: lower-case hex, 8-4-4-4-12.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// Err returns err with its message passed through Text (nil stays nil);
// errors.Is and errors.As still see err. It is for an error whose text
// quotes a peer's answer (an HTTP body, a remote stderr).
func Err(err error) error {
	if err == nil {
		return nil
	}
	return textErr{err}
}

type textErr struct{ err error }

func (e textErr) Error() string { return Text(e.err.Error()) }
func (e textErr) Unwrap() error { return e.err }
