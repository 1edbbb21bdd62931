// Package ptytest holds what the tests that run a console on a real
// pseudo-terminal share: a reader of the master's output that keeps when
// each read came, the line discipline's mode, and the check that a
// program's end left the terminal as it found it. It is for tests only
// (like net/http/httptest): only _test files import it, so none of it is
// in the fgtop binary. It reads termios the Linux way.
package ptytest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The sequences a full-screen program writes on its way in and out.
const (
	EnterAlt   = "\x1b[?1049h" // the alternate screen entered
	LeaveAlt   = "\x1b[?1049l" // the alternate screen left
	ShowCursor = "\x1b[?25h"
	HideCursor = "\x1b[?25l"
	MouseOff   = "\x1b[?1002l" // button-event mouse reporting off
)

// Output is everything read from a pty's master so far, and when each
// read came.
type Output struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	times []time.Time
	done  chan struct{}
}

// Read reads master on a goroutine of its own until a read fails (the
// pty closed, or its other side's last holder is gone).
func Read(master io.Reader) *Output {
	o := &Output{done: make(chan struct{})}
	go func() {
		defer close(o.done)
		b := make([]byte, 64<<10)
		for {
			n, err := master.Read(b)
			if n > 0 {
				o.mu.Lock()
				o.buf.Write(b[:n])
				o.times = append(o.times, time.Now())
				o.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	return o
}

// String is what was read so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Reads is how many reads gave bytes so far.
func (o *Output) Reads() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.times)
}

// ReadAt is when read i (from 0) came.
func (o *Output) ReadAt(i int) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.times[i]
}

// Done is closed when the reads have ended.
func (o *Output) Done() <-chan struct{} { return o.done }

// WaitFor waits at most d for cond to hold of what was read, and fails
// the test if it does not, with the end of what was read.
func (o *Output) WaitFor(t testing.TB, what string, d time.Duration, cond func(out string) bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond(o.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v; the last read: %q", what, d, tail(o.String(), 300))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Canonical reports whether f's line discipline is the usual cooked one:
// canonical, with echo. f may be either side of the pty: they share it.
func Canonical(t testing.TB, f *os.File) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatalf("read the terminal's mode: %v", err)
	}
	return tio.Lflag&unix.ICANON != 0 && tio.Lflag&unix.ECHO != 0
}

// Ending is what a program wrote after it last entered the alternate
// screen.
type Ending struct {
	Entered     bool // it entered the alternate screen at all
	Left        bool // and left it
	Cursor      bool // showed the cursor
	MouseOff    bool // turned mouse reporting off
	HiddenAgain bool // hid the cursor after it left the screen
}

// Ended reads the ending of out.
func Ended(out string) Ending {
	enter := strings.LastIndex(out, EnterAlt)
	if enter < 0 {
		return Ending{}
	}
	rest := out[enter:]
	left := strings.LastIndex(rest, LeaveAlt)
	return Ending{
		Entered:     true,
		Left:        left >= 0,
		Cursor:      strings.Contains(rest, ShowCursor),
		MouseOff:    strings.Contains(rest, MouseOff),
		HiddenAgain: left >= 0 && strings.LastIndex(rest, HideCursor) > left,
	}
}

// Restored reports whether the ending left the terminal usable: the
// alternate screen left, the cursor shown and kept shown, the mouse off.
func (e Ending) Restored() bool {
	return e.Entered && e.Left && e.Cursor && e.MouseOff && !e.HiddenAgain
}

func (e Ending) String() string {
	return fmt.Sprintf("alternate screen entered %v, left %v, cursor shown %v, mouse off %v, cursor hidden again %v",
		e.Entered, e.Left, e.Cursor, e.MouseOff, e.HiddenAgain)
}

// CheckRestored checks that a program that ended left tty cooked and
// wrote, within d, the sequences that restore the screen.
func CheckRestored(t testing.TB, o *Output, tty *os.File, d time.Duration) {
	t.Helper()
	if !Canonical(t, tty) {
		t.Errorf("the terminal was left raw")
	}
	deadline := time.Now().Add(d)
	e := Ended(o.String())
	for !e.Restored() && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
		e = Ended(o.String())
	}
	if !e.Restored() {
		t.Errorf("the screen was not restored: %v; the last read: %q", e, tail(o.String(), 300))
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }
