package main

import (
	"io"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/ui/local"
)

// requireTerminal refuses to start a console without a terminal to draw
// it on (local.CheckTerminal), a usage error saying what to run instead.
func requireTerminal(command, instead string) error {
	if err := local.CheckTerminal(os.Stdin, os.Stdout, tea.OpenTTY, command, instead); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// paintRed colours s red where w is a terminal and NO_COLOR is not set;
// elsewhere (a pipe, a file, a test) s stays as it is.
func paintRed(w io.Writer, s string) string {
	if x, ok := w.(*untrusted.Writer); ok {
		// main's writer: red only where main allowed it (a terminal,
		// NO_COLOR unset); its escaping would otherwise show the
		// sequence as text.
		return x.Red(s)
	}
	f, ok := w.(*os.File)
	if !ok || !local.IsTerminal(f) || os.Getenv("NO_COLOR") != "" {
		return s
	}
	return "\x1b[31m" + s + "\x1b[0m"
}
