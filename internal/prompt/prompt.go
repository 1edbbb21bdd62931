// Package prompt asks the operator at the terminal before a command
// writes: only a person can answer, so without a terminal it refuses
// rather than read an answer from a pipe or /dev/null.
package prompt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrNoTerminal is Confirm's refusal when nobody can answer.
var ErrNoTerminal = errors.New("refusing to write without --yes: stdin is not a terminal, so nobody can confirm")

// ErrNotConfirmed is an answer other than yes.
var ErrNotConfirmed = errors.New("not confirmed: nothing written")

// Confirm asks question on out ("QUESTION [y/N] ") and reads one line of
// in: nil for y or yes (any case, blanks around), else ErrNotConfirmed.
// tty says whether in is a terminal; without one it asks nothing and is
// ErrNoTerminal (cron's /dev/null read an empty answer as no, a pipe's
// "y" would confirm what nobody saw).
func Confirm(in io.Reader, out io.Writer, tty bool, question string) error {
	if !tty {
		return ErrNoTerminal
	}
	fmt.Fprintf(out, "%s [y/N] ", question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return ErrNotConfirmed
}
