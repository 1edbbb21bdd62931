// Package shword writes words for a POSIX shell, so that a command fgtop
// prints (how to undo an apply, how to point commands at the demo node)
// pastes as shown.
package shword

import "strings"

// plain are the characters no shell reads as anything but themselves.
const plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@,%="

// Word is s as one shell word: as it is when no shell would read it
// otherwise, else single-quoted (a $TMPDIR with a space in it).
func Word(s string) string {
	if s != "" && strings.Trim(s, plain) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join is words as shell words, separated by spaces.
func Join(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = Word(w)
	}
	return strings.Join(out, " ")
}
