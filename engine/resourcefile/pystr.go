package resourcefile

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reproduces the three Python str methods the reader and writer
// depend on: strip() (model.TrimPySpace), lower() and upper(). Go's
// strings.ToLower/ToUpper differ from Python for "İ" (Python: "i̇"), for a
// final capital sigma (Python: "ς") and for the 102 characters with
// multi-character upper cases ("ß" → "SS").

// pyLower is Python's str.lower().
func pyLower(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return pyLowerUnicode(s)
		}
		if 'A' <= c && c <= 'Z' {
			return asciiLower(s, i)
		}
	}
	return s
}

// asciiLower lower-cases an ASCII string whose first upper-case letter is
// at index i.
func asciiLower(s string, i int) string {
	for j := i; j < len(s); j++ {
		if s[j] >= utf8.RuneSelf {
			return pyLowerUnicode(s)
		}
	}
	b := make([]byte, len(s))
	copy(b, s)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func pyLowerUnicode(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	for i, r := range s {
		switch r {
		case 0x130: // İ: Python's full lower case keeps the dot.
			b.WriteString("i\u0307")
		case 0x3A3: // Σ
			if finalSigma(s, i) {
				b.WriteRune(0x3C2)
			} else {
				b.WriteRune(0x3C3)
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma reports whether the capital sigma at byte offset i is in
// Unicode's Final_Sigma context, as CPython's handle_capital_sigma decides
// it: preceded by a cased letter (skipping case-ignorable characters) and
// not followed by one.
func finalSigma(s string, i int) bool {
	j := i
	before := false
	for j > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		j -= n
		if !caseIgnorable(r) {
			before = isCased(r)
			break
		}
	}
	if !before {
		return false
	}
	for _, r := range s[i+len("Σ"):] {
		if !caseIgnorable(r) {
			return !isCased(r)
		}
	}
	return true
}

// isCased is Unicode's Cased property.
func isCased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: Mn, Me, Cf, Lm, Sk
// and the Word_Break classes MidLetter, MidNumLet and Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xB7, 0x387, 0x55F, 0x5F4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// pyUpper is Python's str.upper().
func pyUpper(s string) string {
	ascii, lower := true, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if 'a' <= c && c <= 'z' {
			lower = true
		}
	}
	if ascii {
		if !lower {
			return s
		}
		b := []byte(s)
		for i, c := range b {
			if 'a' <= c && c <= 'z' {
				b[i] = c - ('a' - 'A')
			}
		}
		return string(b)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	for _, r := range s {
		if u, ok := pyUpperSpecial[r]; ok {
			b.WriteString(u)
			continue
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}
