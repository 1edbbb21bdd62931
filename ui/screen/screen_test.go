package screen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"github.com/fgtop/fgtop/internal/ptytest"
)

// recorder is a terminal's output: every write, with when it came.
type recorder struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes []time.Time
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, time.Now())
	return r.buf.Write(p)
}

func (r *recorder) state() (n int, writes int, out string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Len(), len(r.writes), r.buf.String()
}

// waitFor polls cond until it holds or the test's patience ends.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

type (
	setText string
	nothing struct{}
)

// page is a model that shows a page of text, changed by setText; keys
// write themselves into the last line, q quits, p panics, and 1 and 2
// return a Cmd that panics, in a sequence and in a nested batch.
type page struct {
	text  string
	init  tea.Cmd
	sizes chan tea.WindowSizeMsg
}

func fullPage(w, h int, mark string) string {
	lines := make([]string, h)
	for y := range lines {
		lines[y] = strings.Repeat(string(rune('a'+y%26)), w)
	}
	lines[h/2] = mark + lines[h/2][len(mark):]
	return strings.Join(lines, "\n")
}

func (m *page) Init() tea.Cmd { return m.init }

func brokenCmd() tea.Msg { panic("a command broke") }

func (m *page) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case setText:
		m.text = string(msg)
	case tea.WindowSizeMsg:
		if m.sizes != nil {
			select {
			case m.sizes <- msg:
			default:
			}
		}
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q":
			return m, tea.Quit
		case "p":
			panic("the model broke")
		case "1":
			// A sequence's Cmds, and a batch a Cmd returns, are run by
			// Bubble Tea itself, not sent through the filter.
			return m, tea.Sequence(func() tea.Msg { return nothing{} }, brokenCmd)
		case "2":
			return m, tea.Batch(func() tea.Msg { return nothing{} },
				func() tea.Msg { return tea.Batch(func() tea.Msg { return nothing{} }, brokenCmd)() })
		}
		m.text = fullPage(80, 24, "key "+msg.String())
	case tea.PasteMsg:
		m.text = fullPage(80, 24, "paste "+msg.Content)
	case tea.MouseClickMsg:
		m.text = fullPage(80, 24, fmt.Sprintf("click %d,%d", msg.X, msg.Y))
	}
	return m, nil
}

func (m *page) View() tea.View {
	v := tea.NewView(m.text)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "screen test"
	return v
}

// pipeProgram runs m on a recorder, 80x24, keys from a pipe.
func pipeProgram(t *testing.T, m tea.Model, o Options) (*Program, *recorder, chan error, func()) {
	t.Helper()
	r := &recorder{}
	in, keys, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if o.Environ == nil {
		o.Environ = []string{"TERM=xterm-256color"}
	}
	// A plain reader, not the file: see startPty.
	o.Out, o.In, o.Width, o.Height = r, struct{ io.Reader }{in}, 80, 24
	ctx, cancel := context.WithCancel(context.Background())
	p := NewProgram(m, o, tea.WithContext(ctx), tea.WithoutSignalHandler())
	done := make(chan error, 1)
	go func() {
		_, err := p.Run()
		done <- err
	}()
	stop := func() {
		cancel()
		<-done
		keys.Close()
		in.Close()
	}
	t.Cleanup(func() {
		cancel()
		keys.Close()
	})
	return p, r, done, stop
}

// TestQuietModelWritesNothing: messages that change nothing on the screen
// write nothing, and a change of one word writes a few bytes, not a frame.
func TestQuietModelWritesNothing(t *testing.T) {
	m := &page{text: fullPage(80, 24, "start")}
	p, r, _, stop := pipeProgram(t, m, Options{Profile: colorprofile.TrueColor})
	defer stop()
	waitFor(t, "the first frame", func() bool { n, _, _ := r.state(); return n > 80*24 })
	time.Sleep(100 * time.Millisecond) // the start's own messages
	before, writes, _ := r.state()
	frames := drawn(p)
	for range 60 {
		p.Send(nothing{})
		time.Sleep(5 * time.Millisecond)
	}
	after, writesAfter, _ := r.state()
	if after != before || writesAfter != writes {
		t.Fatalf("a model that did not change wrote %d bytes in %d writes over 300 ms; want none", after-before, writesAfter-writes)
	}
	if n := drawn(p) - frames; n != 0 {
		t.Fatalf("a model that did not change was drawn %d times over 300 ms; want none", n)
	}
	p.Send(setText(fullPage(80, 24, "other")))
	waitFor(t, "the changed word", func() bool { n, _, _ := r.state(); return n > after })
	time.Sleep(50 * time.Millisecond)
	n, w, out := r.state()
	if d := n - after; d > 40 {
		t.Errorf("one word changed wrote %d bytes (%q); want a few", d, out[after:])
	}
	if w-writesAfter != 1 {
		t.Errorf("one change took %d writes; want 1", w-writesAfter)
	}
	if p.Written() != int64(n) {
		t.Errorf("Written() = %d; the terminal got %d", p.Written(), n)
	}
}

func drawn(p *Program) int {
	p.w.d.mu.Lock()
	defer p.w.d.mu.Unlock()
	return p.w.d.frames
}

// TestBurstIsCoalesced: a burst of changes is drawn at most once per
// interval, and the last state is the one on the screen.
func TestBurstIsCoalesced(t *testing.T) {
	m := &page{text: fullPage(80, 24, "start")}
	p, r, _, stop := pipeProgram(t, m, Options{Profile: colorprofile.TrueColor})
	defer stop()
	waitFor(t, "the first frame", func() bool { n, _, _ := r.state(); return n > 80*24 })
	time.Sleep(50 * time.Millisecond)
	_, before, _ := r.state()
	start := time.Now()
	const changes = 300
	var last string
	for i := range changes {
		last = fullPage(80, 24, "n="+strconv.Itoa(i))
		p.Send(setText(last))
		if i%10 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	took := time.Since(start)
	time.Sleep(3 * MinInterval)
	_, after, _ := r.state()
	frames := after - before
	most := int(took/MinInterval) + 2
	t.Logf("%d changes in %v drew %d frames", changes, took, frames)
	if frames > most {
		t.Errorf("%d changes in %v drew %d frames; want at most %d (one per %v)", changes, took, frames, most, MinInterval)
	}
	if frames >= changes {
		t.Errorf("every change was drawn: nothing coalesced")
	}
	p.w.d.mu.Lock()
	shown := p.w.d.last.content
	p.w.d.mu.Unlock()
	if shown != last {
		t.Errorf("the screen does not show the last change")
	}
}

// TestInputNeverCoalesced: the user's input (a key, a paste, a click, a
// resize) that changes the frame is handed to the drawer at once, even
// right after a frame and with a data change waiting for the interval to
// end; the data's frames are still coalesced. The interval is an hour: a
// frame that waited for it would never come.
func TestInputNeverCoalesced(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input tea.Msg
		want  func(f *frame) bool
	}{
		{"key", tea.KeyPressMsg{Code: 'x', Text: "x"}, func(f *frame) bool { return f.content == fullPage(80, 24, "key x") }},
		{"paste", tea.PasteMsg{Content: "hi"}, func(f *frame) bool { return f.content == fullPage(80, 24, "paste hi") }},
		{"click", tea.MouseClickMsg{X: 3, Y: 4}, func(f *frame) bool { return f.content == fullPage(80, 24, "click 3,4") }},
		{"resize", tea.WindowSizeMsg{Width: 90, Height: 30}, func(f *frame) bool { return f.width == 90 && f.height == 30 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &page{text: fullPage(80, 24, "start")}
			p, r, _, stop := pipeProgram(t, m, Options{Profile: colorprofile.TrueColor, Interval: time.Hour})
			defer stop()
			waitFor(t, "the first frame", func() bool { n, _, _ := r.state(); return n > 80*24 })
			shown := func() *frame {
				p.w.d.mu.Lock()
				defer p.w.d.mu.Unlock()
				return p.w.d.last
			}
			// The start's own messages (the size, the environment).
			time.Sleep(50 * time.Millisecond)
			data := fullPage(80, 24, "data")
			p.Send(setText(data))
			time.Sleep(2 * time.Millisecond)
			sent := time.Now()
			p.Send(tc.input)
			waitFor(t, "the input's frame", func() bool { return tc.want(shown()) })
			took := time.Since(sent)
			t.Logf("input to frame: %v", took)
			if took > time.Second {
				t.Errorf("the input's frame took %v; want it at once", took)
			}
			// The data change before the input waits for the interval
			// still (the key's page replaced it in this model; the
			// resize's frame carries it).
			time.Sleep(30 * time.Millisecond)
			if tc.name != "resize" && shown().content == data {
				t.Errorf("the data's change was drawn before its interval ended: not coalesced")
			}
			if n := drawn(p); n != 2 {
				t.Errorf("%d frames drawn; want 2 (the first and the input's)", n)
			}
		})
	}
}

// TestQueryWrittenAtOnce: a query the model sends (the terminal's
// background colour) reaches the terminal at once, not at Bubble Tea's
// once-a-second flush.
func TestQueryWrittenAtOnce(t *testing.T) {
	m := &page{text: "x", init: tea.RequestBackgroundColor}
	_, r, _, stop := pipeProgram(t, m, Options{Profile: colorprofile.TrueColor})
	defer stop()
	start := time.Now()
	waitFor(t, "the query", func() bool { _, _, out := r.state(); return strings.Contains(out, "\x1b]11;?\x07") })
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Errorf("the background colour query took %v to be written", d)
	}
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// colourParams returns the colour parameters of the SGR sequences in out.
func colourParams(out string) (colours []string) {
	for _, m := range sgr.FindAllStringSubmatch(out, -1) {
		ps := strings.Split(m[1], ";")
		for i := 0; i < len(ps); i++ {
			n, err := strconv.Atoi(strings.SplitN(ps[i], ":", 2)[0])
			if err != nil {
				continue
			}
			switch {
			case n == 38 || n == 48 || n == 58:
				colours = append(colours, strings.Join(ps[i:min(i+5, len(ps))], ";"))
				if i+1 < len(ps) && ps[i+1] == "5" {
					i += 2
				} else if i+1 < len(ps) && ps[i+1] == "2" {
					i += 4
				}
			case n >= 30 && n <= 37, n >= 40 && n <= 47, n >= 90 && n <= 97, n >= 100 && n <= 107:
				colours = append(colours, ps[i])
			}
		}
	}
	return colours
}

// TestColourProfiles: frames are downsampled to the terminal's profile:
// no colour at all under NO_COLOR (bold stays), 256 colours on a
// 256-colour terminal.
func TestColourProfiles(t *testing.T) {
	styled := "\x1b[1;38;2;250;20;20mred bold\x1b[m plain \x1b[48;2;10;200;10mgreen\x1b[m"
	for _, tc := range []struct {
		name     string
		env      []string
		wantNone bool
		want256  bool
	}{
		{"NO_COLOR", []string{"TERM=xterm-256color", "NO_COLOR=1"}, true, false},
		{"256 colours", []string{"TERM=xterm-256color"}, false, true},
		{"true colour", []string{"TERM=xterm-256color", "COLORTERM=truecolor"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &page{text: styled}
			_, r, _, stop := pipeProgram(t, m, Options{Profile: colorprofile.Env(tc.env), Environ: tc.env})
			waitFor(t, "the frame", func() bool { _, _, out := r.state(); return strings.Contains(out, "green") })
			stop()
			_, _, out := r.state()
			cs := colourParams(out)
			switch {
			case tc.wantNone:
				if len(cs) > 0 {
					t.Errorf("colours under NO_COLOR: %q", cs)
				}
				if !slices.ContainsFunc(sgr.FindAllStringSubmatch(out, -1), func(m []string) bool { return slices.Contains(strings.Split(m[1], ";"), "1") }) {
					t.Errorf("bold was dropped too: %q", out)
				}
			case tc.want256:
				if len(cs) == 0 || slices.ContainsFunc(cs, func(c string) bool { return strings.HasPrefix(c, "38;2") || strings.HasPrefix(c, "48;2") }) {
					t.Errorf("want 256-colour sequences only, got %q", cs)
				}
			default:
				if !slices.ContainsFunc(cs, func(c string) bool { return strings.HasPrefix(c, "38;2;250;20;20") }) {
					t.Errorf("true colour lost: %q", cs)
				}
			}
		})
	}
}

// ptyRun is m run on a real pseudo-terminal, as the local console runs.
type ptyRun struct {
	p      *Program
	master *os.File
	tty    *os.File
	done   chan error
	cancel context.CancelFunc
	out    *ptytest.Output
}

// startPty runs m on a pty. With fileKeys the keys are read from the pty
// itself, as the local console reads them; without, through a reader
// that hides the file: Bubble Tea closes a file's cancel reader without
// waiting for its read loop when a program is killed, which the race
// detector reports (Bubble Tea's, not this package's).
func startPty(t *testing.T, m tea.Model, fileKeys bool) *ptyRun {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	env := []string{"TERM=xterm-256color"}
	ctx, cancel := context.WithCancel(context.Background())
	r := &ptyRun{master: master, tty: tty, done: make(chan error, 1), cancel: cancel, out: ptytest.Read(master)}
	var keys io.Reader = tty
	if !fileKeys {
		keys = struct{ io.Reader }{tty}
	}
	r.p = NewProgram(m, Options{Out: tty, In: keys, TTY: tty, SizeOf: tty, Profile: colorprofile.Detect(tty, env), Environ: env},
		tea.WithContext(ctx), tea.WithoutSignalHandler())
	go func() {
		_, err := r.p.Run()
		r.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		r.p.Wait()
		tty.Close()
		master.Close()
	})
	r.out.WaitFor(t, "first frame", 5*time.Second, func(out string) bool { return strings.Contains(out, ptytest.EnterAlt) })
	return r
}

// checkRestored: after the program ended, the terminal is back in cooked
// mode, and the last things written left the alternate screen and showed
// the cursor, with mouse reporting off.
func (r *ptyRun) checkRestored(t *testing.T) {
	t.Helper()
	ptytest.CheckRestored(t, r.out, r.tty, 5*time.Second)
}

// TestKeyFrameWithinOneInterval: on a real terminal at rest, a key's frame
// is written within MinInterval of the key: there is no frame tick to
// wait for.
func TestKeyFrameWithinOneInterval(t *testing.T) {
	r := startPty(t, &page{text: fullPage(80, 24, "start")}, true)
	if ptytest.Canonical(t, r.tty) {
		t.Fatal("the terminal is not in raw mode while the program runs")
	}
	time.Sleep(100 * time.Millisecond)
	var lat []time.Duration
	for i := range 30 {
		before := r.out.Reads()
		key := string("abcdefghijklmnorstuv"[i%20])
		start := time.Now()
		if _, err := r.master.Write([]byte(key)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the key's frame", func() bool { return r.out.Reads() > before })
		lat = append(lat, r.out.ReadAt(before).Sub(start))
		time.Sleep(40 * time.Millisecond) // at rest again
	}
	slices.Sort(lat)
	p50, p90 := lat[len(lat)/2], lat[len(lat)*9/10]
	t.Logf("key to frame over a pty: p50 %v, p90 %v, max %v", p50, p90, lat[len(lat)-1])
	// The median is judged: on a loaded machine (the tests run beside
	// others) the scheduler alone puts a tenth of keys past 16 ms now and
	// then. A frame-rate renderer fails it too: at 20 frames a second
	// half of the keys wait more than 25 ms.
	if p50 > MinInterval && !raceOn {
		t.Errorf("key to frame p50 %v (p90 %v); want within %v", p50, p90, MinInterval)
	}
	if _, err := r.master.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	if err := <-r.done; err != nil {
		t.Fatalf("quit: %v", err)
	}
	r.checkRestored(t)
}

// TestRestoredOnEveryEnd: the terminal is restored when the program is
// killed, when its context ends, and when the model panics.
func TestRestoredOnEveryEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		end     func(r *ptyRun)
		wantErr error
	}{
		{"kill", func(r *ptyRun) { r.p.Kill() }, tea.ErrProgramKilled},
		{"context", func(r *ptyRun) { r.cancel() }, tea.ErrProgramKilled},
		{"panic", func(r *ptyRun) { _, _ = r.master.Write([]byte("p")) }, tea.ErrProgramPanic},
		{"panic in a sequence", func(r *ptyRun) { _, _ = r.master.Write([]byte("1")) }, tea.ErrProgramPanic},
		{"panic in a nested batch", func(r *ptyRun) { _, _ = r.master.Write([]byte("2")) }, tea.ErrProgramPanic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startPty(t, &page{text: fullPage(80, 24, "start")}, false)
			// Bubble Tea prints a panic on stderr: by then the terminal
			// must be cooked again, or the report is lost with the
			// alternate screen.
			cookedAtReport := make(chan bool, 1)
			if tc.wantErr == tea.ErrProgramPanic {
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				stderr := os.Stderr
				os.Stderr = pw
				// Bubble Tea reads os.Stderr again for the report's
				// stack: it is put back only once the stack is read
				// (the pipe's read is what orders the two).
				reported := make(chan bool, 1)
				defer func() {
					select {
					case <-reported:
					case <-time.After(5 * time.Second):
						t.Error("the panic's report did not end with its stack")
					}
					os.Stderr = stderr
					pw.Close()
				}()
				go func() {
					b := make([]byte, 1)
					if _, err := pr.Read(b); err != nil {
						return
					}
					cookedAtReport <- ptytest.Canonical(t, r.tty)
					report := append([]byte(nil), b...)
					buf := make([]byte, 4096)
					for !stackEnded(report) {
						n, err := pr.Read(buf)
						report = append(report, buf[:n]...)
						if err != nil {
							return
						}
					}
					reported <- true
					_, _ = io.Copy(io.Discard, pr)
				}()
			}
			tc.end(r)
			select {
			case err := <-r.done:
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("Run: %v; want %v", err, tc.wantErr)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the program did not end")
			}
			r.checkRestored(t)
			if tc.wantErr == tea.ErrProgramPanic && !<-cookedAtReport {
				t.Errorf("the panic was reported while the terminal was still raw")
			}
		})
	}
}

// stackEnded reports whether a Bubble Tea panic report has been read to
// the end of its stack: a goroutine's trace, then a blank line.
func stackEnded(report []byte) bool {
	_, stack, ok := bytes.Cut(report, []byte("goroutine "))
	return ok && bytes.Contains(stack, []byte("\r\n\r\n"))
}

// TestResizeFollowsSIGWINCH: a local terminal's new size reaches the
// model, and the next frame is drawn at it.
func TestResizeFollowsSIGWINCH(t *testing.T) {
	m := &page{text: fullPage(80, 24, "start"), sizes: make(chan tea.WindowSizeMsg, 8)}
	r := startPty(t, m, false)
	if err := pty.Setsize(r.master, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	// The pty is not this process's controlling terminal: the kernel
	// signals no one, so the test does.
	if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case s := <-m.sizes:
			if s.Width == 100 && s.Height == 30 {
				r.p.Send(setText(fullPage(100, 30, "bigger")))
				waitFor(t, "a frame at the new size", func() bool {
					r.p.w.d.mu.Lock()
					defer r.p.w.d.mu.Unlock()
					return r.p.w.d.last != nil && r.p.w.d.last.width == 100 && r.p.w.d.last.height == 30
				})
				return
			}
		case <-deadline:
			t.Fatal(fmt.Sprintf("the model never got the new size 100x30"))
		}
	}
}

// TestSynchronizedOutput: the terminal is asked whether it knows
// synchronized output, and once it says so, each frame comes wrapped in
// it, so it is shown whole.
func TestSynchronizedOutput(t *testing.T) {
	m := &page{text: fullPage(80, 24, "start")}
	p, r, _, stop := pipeProgram(t, m, Options{Profile: colorprofile.TrueColor})
	defer stop()
	waitFor(t, "the question", func() bool { _, _, out := r.state(); return strings.Contains(out, "\x1b[?2026$p") })
	waitFor(t, "the first frame", func() bool { n, _, _ := r.state(); return n > 80*24 })
	_, _, out := r.state()
	if strings.Contains(out, "\x1b[?2026h") {
		t.Fatal("synchronized output used before the terminal said it knows it")
	}
	p.Send(tea.ModeReportMsg{Mode: ansi.ModeSynchronizedOutput, Value: ansi.ModeReset})
	n0, _, _ := r.state()
	p.Send(setText(fullPage(80, 24, "other")))
	waitFor(t, "the next frame", func() bool { n, _, _ := r.state(); return n > n0 })
	time.Sleep(20 * time.Millisecond)
	_, _, out = r.state()
	if frame := out[n0:]; !strings.HasPrefix(frame, "\x1b[?2026h") || !strings.HasSuffix(frame, "\x1b[?2026l") {
		t.Errorf("frame not wrapped in synchronized output: %q", frame)
	}
}

func TestAsksSync(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want bool
	}{
		{[]string{"TERM=xterm-256color"}, true},
		{[]string{"TERM=xterm-256color", "SSH_TTY=/dev/pts/1"}, false},
		{[]string{"TERM=xterm-kitty", "SSH_TTY=/dev/pts/1"}, true},
		{[]string{"TERM=xterm-256color", "TERM_PROGRAM=Apple_Terminal"}, false},
	} {
		if got := asksSync(tc.env); got != tc.want {
			t.Errorf("asksSync(%q) = %v; want %v", tc.env, got, tc.want)
		}
	}
}

// TestDrawPanicRestores: a panic in the drawing goroutine ends the
// program, not the process (a served console's would end every session of
// the server): the terminal is restored (cooked, alternate screen left,
// cursor shown) and Run returns the panic, with where it happened.
func TestDrawPanicRestores(t *testing.T) {
	r := startPty(t, &page{text: fullPage(80, 24, "start")}, false)
	waitFor(t, "the first frame", func() bool { return drawn(r.p) > 0 })
	r.p.w.d.mu.Lock()
	r.p.w.d.scr = nil // the next frame panics
	r.p.w.d.mu.Unlock()
	r.p.Send(setText(fullPage(80, 24, "broken")))
	select {
	case err := <-r.done:
		var dp *DrawPanicError
		if !errors.As(err, &dp) || !errors.Is(err, tea.ErrProgramPanic) || !errors.Is(err, tea.ErrProgramKilled) {
			t.Fatalf("Run: %v; want a *DrawPanicError, a tea.ErrProgramPanic", err)
		}
		if !strings.Contains(string(dp.Stack), "(*drawer).draw") {
			t.Errorf("the panic's stack does not say where: %s", dp.Stack)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the program did not end after drawing panicked")
	}
	r.checkRestored(t)
	n := len(r.out.String())
	r.p.Send(setText(fullPage(80, 24, "after")))
	time.Sleep(50 * time.Millisecond)
	if m := len(r.out.String()); m != n {
		t.Errorf("%d bytes written after the terminal was restored", m-n)
	}
}

// TestGraphemeWidths: the terminal is asked whether it measures by
// grapheme (mode 2027); once it says so, cells are measured as it and
// lipgloss measure them, so an emoji with a variation selector takes two
// cells and what follows it on its line is not drawn one cell to the
// left; the frame is redrawn at once, the mode turned on, and off again
// on the way out.
func TestGraphemeWidths(t *testing.T) {
	const heart = "\u2764\ufe0f" // two cells by grapheme, one by wcwidth
	if ansi.StringWidth(heart) != 2 || ansi.StringWidthWc(heart) != 1 {
		t.Fatalf("widths of %q: grapheme %d, wcwidth %d", heart, ansi.StringWidth(heart), ansi.StringWidthWc(heart))
	}
	text := "a" + heart + "b\n" + fullPage(80, 23, "start")
	p, r, _, stop := pipeProgram(t, &page{text: text}, Options{Profile: colorprofile.TrueColor})
	waitFor(t, "the question", func() bool { _, _, out := r.state(); return strings.Contains(out, "\x1b[?2027$p") })
	bAt := func() int {
		p.w.d.mu.Lock()
		defer p.w.d.mu.Unlock()
		if p.w.d.cells.RenderBuffer == nil {
			return -1
		}
		for x := range 6 {
			if c := p.w.d.cells.CellAt(x, 0); c != nil && c.Content == "b" {
				return x
			}
		}
		return -1
	}
	waitFor(t, "the first frame", func() bool { return bAt() >= 0 })
	if x := bAt(); x != 2 {
		t.Fatalf("before the terminal answered, b is at column %d; want 2 (wcwidth)", x)
	}
	n0, _, _ := r.state()
	p.Send(tea.ModeReportMsg{Mode: ansi.ModeUnicodeCore, Value: ansi.ModeReset})
	waitFor(t, "b after a two-cell heart", func() bool { return bAt() == 3 })
	waitFor(t, "the frame", func() bool { n, _, _ := r.state(); return n > n0 })
	_, _, out := r.state()
	if !strings.Contains(out[n0:], "\x1b[?2027h") {
		t.Errorf("mode 2027 not turned on: %q", out[n0:])
	}
	stop()
	_, _, out = r.state()
	if on, off := strings.LastIndex(out, "\x1b[?2027h"), strings.LastIndex(out, "\x1b[?2027l"); off < on {
		t.Errorf("mode 2027 left on at the end: on at %d, off at %d", on, off)
	}
}
