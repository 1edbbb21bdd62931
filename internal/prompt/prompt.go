// Package prompt asks the operator at the terminal before a command
// writes: only a person can answer, so without a terminal it refuses
// rather than read an answer from a pipe or /dev/null.
package prompt

import (
	"bufio"
	"context"
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
//
// ctx ending is a no, at once: the commands end ctx on Ctrl-C and
// SIGTERM, which they catch, so a prompt that only read in kept waiting
// and took the next line typed as the answer. The read is left behind;
// the caller is on its way out.
func Confirm(ctx context.Context, in io.Reader, out io.Writer, tty bool, question string) error {
	if !tty {
		return ErrNoTerminal
	}
	if ctx.Err() != nil {
		return ErrNotConfirmed
	}
	fmt.Fprintf(out, "%s [y/N] ", question)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(in).ReadString('\n')
		answer <- line
	}()
	var line string
	select {
	case line = <-answer:
	case <-ctx.Done():
		// The terminal echoed ^C after the question: what follows
		// starts a line of its own.
		fmt.Fprintln(out)
		return ErrNotConfirmed
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return ErrNotConfirmed
}
