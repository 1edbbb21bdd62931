package local

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestCheckTerminal covers, with pipes, output to a pipe: then /dev/tty
// is not even tried, and the refusal says what to run instead. The
// /dev/tty branch (stdin a pipe, a terminal on stdout) needs a pty:
// TestCheckTerminalStdinPipe, and cmd/fgtop's TestConsoleWithoutTerminal
// end to end.
func TestCheckTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	opened := false
	noTTY := func() (*os.File, *os.File, error) { opened = true; return nil, nil, errors.New("no tty") }

	err = CheckTerminal(r, w, noTTY, "fgtop watch", "fgtop snapshot --json")
	if err == nil || !strings.Contains(err.Error(), "output is not a terminal") {
		t.Errorf("output to a pipe: %v", err)
	}
	for _, want := range []string{"fgtop watch is an interactive console", "fgtop snapshot --json", "ssh -t HOST fgtop watch"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q: %v", want, err)
		}
	}
	if opened {
		t.Error("opened /dev/tty although the output already rules the console out")
	}
	if IsTerminal(r) || IsTerminal(nil) {
		t.Error("a pipe or nil counts as a terminal")
	}
}
