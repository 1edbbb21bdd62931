//go:build unix

package local

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// TestCheckTerminalStdinPipe covers the branch TestCheckTerminal cannot
// reach with pipes alone: output on a terminal (a pty) and stdin a pipe,
// where Bubble Tea reads keys from /dev/tty. A /dev/tty that opens lets
// the console start, and is closed again; one that does not is refused,
// saying there is nothing to read keys from.
func TestCheckTerminalStdinPipe(t *testing.T) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()

	noTTY := func() (*os.File, *os.File, error) { return nil, nil, errors.New("no tty") }
	err = CheckTerminal(r, tty, noTTY, "fgtop watch", "fgtop snapshot --json")
	if err == nil || !strings.Contains(err.Error(), "it has no terminal to read keys from") {
		t.Errorf("stdin a pipe, no /dev/tty: %v", err)
	}

	ttyIn, ttyOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	devTTY := func() (*os.File, *os.File, error) { opened++; return ttyIn, ttyOut, nil }
	if err := CheckTerminal(r, tty, devTTY, "fgtop watch", "fgtop snapshot --json"); err != nil || opened != 1 {
		t.Errorf("stdin a pipe, /dev/tty opens: %v (opened %d times)", err, opened)
	}
	// The check only looks: what it opened is closed again.
	for _, f := range []*os.File{ttyIn, ttyOut} {
		if err := f.Close(); !errors.Is(err, os.ErrClosed) {
			t.Errorf("%s left open (Close: %v)", f.Name(), err)
		}
	}
	if !IsTerminal(tty) {
		t.Error("a pty does not count as a terminal")
	}
}
