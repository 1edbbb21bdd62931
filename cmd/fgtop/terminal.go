package main

import (
	"io"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
)

// requireTerminal refuses to start a console without a terminal to draw it
// on, before the engine or the demo node starts, and says what to run
// instead. Bubble Tea alone would fail later with "could not open TTY",
// which tells a cron job or `ssh host fgtop` nothing useful. command is
// how the user started the console ("fgtop watch"); instead is the
// non-interactive command that answers the same question.
func requireTerminal(command, instead string) error {
	return checkTerminal(os.Stdin, os.Stdout, tea.OpenTTY, command, instead)
}

// checkTerminal is requireTerminal with the files and the /dev/tty opener
// given, for tests.
func checkTerminal(in, out *os.File, openTTY func() (*os.File, *os.File, error), command, instead string) error {
	var why string
	switch {
	case !isTerminal(out):
		why = "its output is not a terminal (redirected to a file or a pipe)"
	case !isTerminal(in):
		// Bubble Tea reads keys from /dev/tty when stdin is a pipe.
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
	lines := []string{
		command + " is an interactive console, and " + why + ".",
		"  for a report without a terminal:  " + instead,
		"  over SSH, ask for a terminal:     ssh -t HOST " + command,
	}
	return usageErr("%s", strings.Join(lines, "\n"))
}

func isTerminal(f *os.File) bool {
	return f != nil && term.IsTerminal(f.Fd())
}

// paintRed colours s red where w is a terminal and NO_COLOR is not set;
// elsewhere (a pipe, a file, a test) s stays as it is.
func paintRed(w io.Writer, s string) string {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f) || os.Getenv("NO_COLOR") != "" {
		return s
	}
	return "\x1b[31m" + s + "\x1b[0m"
}
