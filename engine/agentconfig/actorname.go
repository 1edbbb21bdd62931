package agentconfig

import (
	"strings"
	"unicode/utf8"

	"github.com/fgtop/fgtop/internal/untrusted"
)

// maxNameRunes bounds an actor name as it is printed and journaled: the
// SSH user name is the client's free choice.
const maxNameRunes = 64

// CleanName is s fit to print on a terminal and to journal: control
// characters (C0, DEL, C1: an SSH user name "\x1b]0;..." would otherwise
// reach the terminal of whoever runs `fgtop apply` or reads the journal),
// line and paragraph separators and bidirectional overrides are replaced
// by '?', and it is cut at 64 characters.
func CleanName(s string) string {
	// Invalid UTF-8 is rewritten too: a lone 0x9b is CSI to some
	// terminals.
	clean := utf8.ValidString(s)
	n := 0
	for _, r := range s {
		n++
		if unprintable(r) {
			clean = false
		}
	}
	if clean && n <= maxNameRunes {
		return s
	}
	var b strings.Builder
	i := 0
	for _, r := range s {
		if i == maxNameRunes {
			b.WriteString("…")
			break
		}
		if unprintable(r) {
			r = '?'
		}
		b.WriteRune(r)
		i++
	}
	return b.String()
}

// unprintable is the one rule for outside text's set (untrusted.Unsafe):
// controls, line separators, bidirectional overrides.
func unprintable(r rune) bool { return untrusted.Unsafe(r) }

// Clean returns the actor with every field that is printed or journaled
// passed through CleanName.
func (a Actor) Clean() Actor {
	a.Name, a.Origin, a.Key = CleanName(a.Name), cleanLong(a.Origin), CleanName(a.Key)
	return a
}

// cleanLong is CleanName without the length cut, for an origin (which
// carries an address and a key fingerprint).
func cleanLong(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unprintable) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unprintable(r) {
			return '?'
		}
		return r
	}, s)
}
