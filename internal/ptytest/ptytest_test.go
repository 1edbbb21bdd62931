package ptytest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestEnded reads the ending of outputs that restored the screen and of
// ones that did not, each way.
func TestEnded(t *testing.T) {
	restore := LeaveAlt + ShowCursor + MouseOff
	for _, tc := range []struct {
		name string
		out  string
		want Ending
	}{
		{"never entered", "plain text" + restore, Ending{}},
		{"restored", "x" + EnterAlt + HideCursor + "frame" + restore, Ending{true, true, true, true, false}},
		{"still on the screen", EnterAlt + HideCursor + "frame", Ending{Entered: true}},
		{"mouse left on", EnterAlt + LeaveAlt + ShowCursor, Ending{true, true, true, false, false}},
		{"cursor hidden again", EnterAlt + restore + HideCursor, Ending{true, true, true, true, true}},
		{"entered again, not left", EnterAlt + restore + EnterAlt + "second", Ending{Entered: true}},
		{"entered again and left", EnterAlt + restore + EnterAlt + HideCursor + restore, Ending{true, true, true, true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Ended(tc.out)
			if got != tc.want {
				t.Errorf("Ended(%q) = %v; want %v", tc.out, got, tc.want)
			}
			if wantOK := tc.want == (Ending{true, true, true, true, false}); got.Restored() != wantOK {
				t.Errorf("Restored() = %v; want %v", got.Restored(), wantOK)
			}
		})
	}
}

// errorsTB is a test whose Errorf is recorded, to see a check fail.
type errorsTB struct {
	testing.TB
	errs []string
}

func (e *errorsTB) Helper() {}
func (e *errorsTB) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// TestOnPty: on a real pty, what the program's side writes is read with
// when it came, the mode is read raw and cooked as it is set, and
// CheckRestored passes a restored ending and names what an unrestored
// one lacks.
func TestOnPty(t *testing.T) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer master.Close()
	out := Read(master)
	if !Canonical(t, tty) || !Canonical(t, master) {
		t.Fatal("a new pty is not cooked")
	}
	cooked, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	raw := *cooked
	raw.Lflag &^= unix.ICANON | unix.ECHO
	if err := unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, &raw); err != nil {
		t.Fatal(err)
	}
	if Canonical(t, master) {
		t.Error("a raw pty reads as cooked")
	}
	noEcho := *cooked
	noEcho.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, &noEcho); err != nil {
		t.Fatal(err)
	}
	if Canonical(t, master) {
		t.Error("a pty without echo reads as cooked")
	}

	before := time.Now()
	if _, err := tty.WriteString(EnterAlt + "frame" + LeaveAlt); err != nil {
		t.Fatal(err)
	}
	out.WaitFor(t, "frame", 5*time.Second, func(s string) bool { return strings.Contains(s, LeaveAlt) })
	if out.Reads() < 1 || out.ReadAt(0).Before(before) {
		t.Errorf("%d reads, the first at %v (the write at %v)", out.Reads(), out.ReadAt(0), before)
	}
	// Not restored: raw (no echo) and the cursor and mouse not seen to.
	var failed errorsTB
	failed.TB = t
	CheckRestored(&failed, out, tty, 50*time.Millisecond)
	if msg := strings.Join(failed.errs, "\n"); !strings.Contains(msg, "left raw") || !strings.Contains(msg, "cursor shown false") {
		t.Errorf("an unrestored pty passed CheckRestored or was not named: %q", msg)
	}

	if err := unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, cooked); err != nil {
		t.Fatal(err)
	}
	if _, err := tty.WriteString(ShowCursor + MouseOff); err != nil {
		t.Fatal(err)
	}
	CheckRestored(t, out, tty, 5*time.Second)

	tty.Close()
	select {
	case <-out.Done():
	case <-time.After(5 * time.Second):
		t.Error("the reads did not end when the pty's other side closed")
	}
}
