package local

import (
	"errors"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
)

// CheckTerminal refuses to start a console without a terminal to draw it
// on, before the engine or the demo node starts, and says what to run
// instead: Bubble Tea alone would fail later with "could not open TTY",
// which tells a cron job or `ssh host fgtop` nothing useful. in and out
// are the console's stdin and stdout; openTTY opens /dev/tty (tea.OpenTTY),
// from which Bubble Tea reads keys when stdin is a pipe. command is how
// the user started the console ("fgtop watch"); instead is the
// non-interactive command that answers the same question.
func CheckTerminal(in, out *os.File, openTTY func() (*os.File, *os.File, error), command, instead string) error {
	var why string
	switch {
	case !IsTerminal(out):
		why = "its output is not a terminal (redirected to a file or a pipe)"
	case !IsTerminal(in):
		ttyIn, ttyOut, err := openTTY()
		if err != nil {
			why = "it has no terminal to read keys from (stdin is not one, and there is no /dev/tty)"
			break
		}
		ttyIn.Close()
		if ttyOut != ttyIn {
			ttyOut.Close()
		}
	}
	if why == "" {
		return nil
	}
	return errors.New(strings.Join([]string{
		command + " is an interactive console, and " + why + ".",
		"  for a report without a terminal:  " + instead,
		"  over SSH, ask for a terminal:     ssh -t HOST " + command,
	}, "\n"))
}

// IsTerminal reports whether f is a terminal (nil is not).
func IsTerminal(f *os.File) bool {
	return f != nil && term.IsTerminal(f.Fd())
}
