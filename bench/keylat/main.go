// Command keylat measures how long a key press takes to reach the screen:
// it runs a console (the real fgtop binary) in a pty of its own, as a
// terminal would, presses a key whose effect is visible, and times the
// output that follows (issue 29: ≤ 16 ms p99, at rest and under churn).
//
// The key is ? by default: it opens the console's help, and ? again closes
// it. A round presses it once; the frame that answers an opening must hold
// -open (default "shift+tab", a line of the help only), one that answers a
// closing must hold -close (default "HELD/CAPACITY", the device table's
// header, which the help covers). Rounds alternate, so every press has a
// frame to wait for, whatever else the console draws meanwhile (the
// clock, the demo's churn). Between presses keylat waits an uneven gap
// (-gap-min to -gap-max) so presses do not fall in step with the console's
// timers.
//
// keylat answers the terminal queries a modern terminal answers: mode
// 2026 (synchronized output) is reported supported, so Bubble Tea brackets
// every frame in CSI ?2026h ... CSI ?2026l and a frame's end is exact.
// With -sync=false it answers nothing and a frame is one read from the
// pty.
//
// Per press it records two times from the write of the key: the first
// byte the pty gives after it (whatever frame that byte belongs to: a
// lower bound), and the end of the frame holding the marker (the figure
// that counts). It prints p50, p90, p99 and max of both, in all and per
// direction, and fails (exit 1) when the console does not show its first
// frame (-ready) within -start-timeout, a press gets no answering frame
// within -timeout, or the console exits.
//
// What it measures is kept apart from keylat's own delays: each pty is
// read on a thread of its own in blocking reads, a read's time taken as
// the read returns; the pressing and reading threads run at SCHED_FIFO
// where allowed (-rt; the programs measured are started before, and run
// as they would). With -floor (the default) a trivial program, keylat
// itself answering each key at once with a frame, runs in a pty of its
// own and is pressed alternately with the console in the same run: its
// figures are the floor under the console's, the pty, keylat and the
// machine's load, measured under the same load.
//
//	go run ./bench/keylat -- /tmp/fgtop demo
//	go run ./bench/keylat -rounds 200 -cols 80 -rows 24 -- /tmp/fgtop --devices nvml --history off --scratch-root /tmp/empty
//
// bench/keylat.sh runs it on the demo (churn) and on a quiet fake node.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// event is one thing read from the pty: a chunk (any bytes) or the end of
// a frame.
type event struct {
	at    time.Time
	frame bool
	text  string // printable text (a frame's, or a chunk's), escape sequences removed
	err   error  // the pty's end: the console exited
}

// parser splits the console's output into frames and answers its queries.
type parser struct {
	sync   bool
	answer func([]byte)

	state   int // ground, esc, csi, str (OSC, DCS, APC, PM), strEsc
	seq     []byte
	text    bytes.Buffer
	chunk   bytes.Buffer // the text of the current feed, framed or not
	inFrame bool
	frames  []string
}

const (
	ground = iota
	esc
	csi
	str
	strEsc
)

// feed parses p; it returns the frames that ended in it.
func (ps *parser) feed(p []byte) []string {
	ps.frames = ps.frames[:0]
	ps.chunk.Reset()
	for _, c := range p {
		switch ps.state {
		case ground:
			switch {
			case c == 0x1b:
				ps.state = esc
			case c == '\r' || c == '\n':
				ps.text.WriteByte('\n')
				ps.chunk.WriteByte('\n')
			case c >= 0x20 && c != 0x7f:
				ps.text.WriteByte(c)
				ps.chunk.WriteByte(c)
			}
		case esc:
			switch c {
			case '[':
				ps.state, ps.seq = csi, ps.seq[:0]
			case ']', 'P', '_', '^':
				ps.state, ps.seq = str, append(ps.seq[:0], c)
			default:
				ps.state = ground
			}
		case csi:
			ps.seq = append(ps.seq, c)
			if c >= 0x40 && c <= 0x7e {
				ps.state = ground
				ps.csi(string(ps.seq))
			}
		case str:
			switch c {
			case 0x07:
				ps.state = ground
				ps.str(string(ps.seq))
			case 0x1b:
				ps.state = strEsc
			default:
				ps.seq = append(ps.seq, c)
			}
		case strEsc:
			ps.state = ground
			ps.str(string(ps.seq))
		}
	}
	return ps.frames
}

// csi handles one control sequence (without its CSI).
func (ps *parser) csi(s string) {
	switch s {
	case "?2026h":
		ps.text.Reset()
		ps.inFrame = true
	case "?2026l":
		ps.frames = append(ps.frames, ps.text.String())
		ps.text.Reset()
		ps.inFrame = false
	case "?2026$p":
		if ps.sync {
			ps.answer([]byte("\x1b[?2026;2$y")) // supported, off
		}
	case "?2027$p":
		if ps.sync {
			ps.answer([]byte("\x1b[?2027;0$y")) // not recognised
		}
	case "c", "0c":
		if ps.sync {
			ps.answer([]byte("\x1b[?62;22c"))
		}
	default:
		if !strings.HasSuffix(s, "m") {
			// A cursor move: the text on either side is not one word.
			ps.text.WriteByte('\n')
			ps.chunk.WriteByte('\n')
		}
	}
}

// str handles an OSC, DCS, APC or PM string (its introducer first).
func (ps *parser) str(s string) {
	if ps.sync && (s == "]11;?" || s == "]10;?") {
		ps.answer([]byte("\x1b" + s[:4] + "rgb:0000/0000/0000\x1b\\"))
	}
}

type options struct {
	cols, rows     int
	rounds         int
	key            string
	open, close    string
	ready          string
	gapMin, gapMax time.Duration
	timeout        time.Duration
	startTimeout   time.Duration
	settle         time.Duration
	sync           bool
	term           string
	floor          bool
	rt             bool
	echoChild      bool
}

func main() {
	var o options
	flag.IntVar(&o.cols, "cols", 160, "the pty's columns")
	flag.IntVar(&o.rows, "rows", 48, "the pty's rows")
	flag.IntVar(&o.rounds, "rounds", 100, "key presses (half open the help, half close it)")
	flag.StringVar(&o.key, "key", "?", "the key pressed; it must toggle between two screens")
	flag.StringVar(&o.open, "open", "shift+tab", "text the frame answering an odd press holds")
	flag.StringVar(&o.close, "close", "HELD/CAPACITY", "text the frame answering an even press holds")
	flag.StringVar(&o.ready, "ready", "HELD/CAPACITY", "text the console's first frame holds")
	flag.DurationVar(&o.gapMin, "gap-min", 250*time.Millisecond, "shortest wait between an answer and the next press")
	flag.DurationVar(&o.gapMax, "gap-max", 650*time.Millisecond, "longest wait between an answer and the next press")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Second, "longest wait for a press's frame")
	flag.DurationVar(&o.startTimeout, "start-timeout", 60*time.Second, "longest wait for the first frame")
	flag.DurationVar(&o.settle, "settle", 2*time.Second, "wait after the first frame before the first press")
	flag.BoolVar(&o.sync, "sync", true, "answer the synchronized-output query (exact frame ends), as modern terminals do")
	flag.StringVar(&o.term, "term", "xterm-256color", "TERM of the console")
	flag.BoolVar(&o.floor, "floor", true, "press a trivial echo program (keylat itself) in a pty of its own in the same run, alternately with the console: the harness's own latency under the same load")
	flag.BoolVar(&o.rt, "rt", true, "run keylat's pressing and reading threads at SCHED_FIFO priority (where allowed), so its own waits for a core stay out of the figures")
	flag.BoolVar(&o.echoChild, "echo-child", false, "be the echo program of -floor (internal)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: keylat [flags] -- COMMAND [ARGS...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if o.echoChild {
		if err := echo(o); err != nil {
			fmt.Fprintln(os.Stderr, "keylat echo:", err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() == 0 || o.rounds < 2 || o.gapMax < o.gapMin || o.key == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(o, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "keylat:", err)
		os.Exit(1)
	}
}

// environ is the console's environment: this one without what would make
// Bubble Tea treat the pty as a remote or named terminal.
func environ(term string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "TERM", "TERM_PROGRAM", "SSH_TTY", "SSH_CONNECTION", "SSH_CLIENT", "TMUX", "COLUMNS", "LINES":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TERM="+term)
}

// target is one program in a pty of its own, and the times of its
// answers.
type target struct {
	name   string
	argv   []string
	cmd    *exec.Cmd
	tty    *os.File
	stderr bytes.Buffer
	events chan event
	sync   bool

	first, frame   [2][]time.Duration
	frames, chunks int
}

// start runs argv in a cols x rows pty. The reading starts with read.
func start(name string, argv []string, o options, sync bool) (*target, error) {
	t := &target{name: name, argv: argv, events: make(chan event, 1<<16), sync: sync}
	t.cmd = exec.Command(argv[0], argv[1:]...)
	t.cmd.Env = environ(o.term)
	t.cmd.Stderr = &t.stderr
	// pty.StartWithSize gives the command the pty as stdin and stdout;
	// stderr stays ours so a failing console's words are kept.
	tty, err := pty.StartWithSize(t.cmd, &pty.Winsize{Rows: uint16(o.rows), Cols: uint16(o.cols)})
	if err != nil {
		return nil, fmt.Errorf("start %s in a pty: %w", argv[0], err)
	}
	t.tty = tty
	return t, nil
}

// read follows the pty on a thread of its own, in blocking reads, so a
// read's time is taken the moment the kernel hands the bytes over (not
// when the Go scheduler next runs a goroutine the netpoller woke).
func (t *target) read(rt bool) {
	ps := &parser{sync: t.sync, answer: func(b []byte) { _, _ = t.tty.Write(b) }}
	fd := int(t.tty.Fd()) // Fd puts the file in blocking mode
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if rt {
			_ = realtime()
		}
		buf := make([]byte, 1<<16)
		for {
			n, err := unix.Read(fd, buf)
			at := time.Now()
			if err == unix.EINTR {
				continue
			}
			if n > 0 {
				frames := ps.feed(buf[:n])
				t.events <- event{at: at, text: ps.chunk.String()}
				if !t.sync {
					frames = append(frames, ps.text.String())
					ps.text.Reset()
				}
				for _, f := range frames {
					t.events <- event{at: at, frame: true, text: f}
				}
			}
			if err == nil && n == 0 {
				err = io.EOF
			}
			if err != nil {
				t.events <- event{at: at, err: err}
				return
			}
		}
	}()
}

// stop ends the program and closes its pty.
func (t *target) stop() {
	_ = t.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = t.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = t.cmd.Process.Kill()
		<-done
	}
	_ = t.tty.Close()
}

func (t *target) exited(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO) {
		err = errors.New("the pty closed")
	}
	return fmt.Errorf("%s ended (%v); its stderr: %s", t.name, err, strings.TrimSpace(t.stderr.String()))
}

// ready waits for the first frame: the program is up and drawing. The
// first frame may come before the answer to the synchronized-output
// query, unbracketed, so what counts here is the text of every chunk.
func (t *target) ready(text string, timeout time.Duration) error {
	var seen strings.Builder
	deadline := time.After(timeout)
	for {
		select {
		case ev := <-t.events:
			if ev.err != nil {
				return t.exited(ev.err)
			}
			if !ev.frame {
				seen.WriteString(ev.text)
				if strings.Contains(seen.String(), text) {
					return nil
				}
			}
		case <-deadline:
			return fmt.Errorf("%s: no frame holding %q within %s (is -ready right for this console and size? -sync=false if it never brackets frames); its stderr: %s",
				t.name, text, timeout, strings.TrimSpace(t.stderr.String()))
		}
	}
}

// press waits an uneven gap, presses key and waits for the frame holding
// want; dir (0 opening, 1 closing) files the times.
func (t *target) press(o options, dir int, want string) error {
	gap := o.gapMin + rand.N(o.gapMax-o.gapMin+1)
	if err := drain(t.events, gap); err != nil {
		return t.exited(err)
	}
	t0 := time.Now()
	if _, err := t.tty.Write([]byte(o.key)); err != nil {
		return fmt.Errorf("%s: press %q: %w", t.name, o.key, err)
	}
	var firstAt time.Time
	timeout := time.After(o.timeout)
	for {
		select {
		case ev := <-t.events:
			switch {
			case ev.err != nil:
				return t.exited(ev.err)
			case ev.at.Before(t0):
				// Read before the press: not its answer.
			case !ev.frame:
				t.chunks++
				if firstAt.IsZero() {
					firstAt = ev.at
				}
			case !strings.Contains(ev.text, want):
				t.frames++ // another frame: the clock, the churn
			default:
				t.frames++
				t.first[dir] = append(t.first[dir], firstAt.Sub(t0))
				t.frame[dir] = append(t.frame[dir], ev.at.Sub(t0))
				return nil
			}
		case <-timeout:
			return fmt.Errorf("%s: press %q: no frame holding %q within %s", t.name, o.key, want, o.timeout)
		}
	}
}

func run(o options, argv []string) error {
	// Every program is started before any thread of keylat turns
	// realtime: a child forked from such a thread would inherit it.
	console, err := start("the console", argv, o, o.sync)
	if err != nil {
		return err
	}
	defer console.stop()
	targets := []*target{console}
	if o.floor {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("the floor's echo program (keylat itself): %w", err)
		}
		echo, err := start("the floor (keylat -echo-child)", []string{self, "-echo-child", "-open", o.open, "-close", o.close, "-ready", o.ready}, o, true)
		if err != nil {
			return err
		}
		defer echo.stop()
		targets = append(targets, echo)
	}
	rtNote := "off"
	if o.rt {
		// The pressing goroutine stays on this thread, so its time before
		// each write is taken where it writes.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := realtime(); err != nil {
			rtNote = "not allowed (" + err.Error() + "): keylat's own waits for a core are in the figures"
		} else {
			rtNote = "SCHED_FIFO"
		}
	}
	for _, t := range targets {
		t.read(o.rt)
	}
	for _, t := range targets {
		if err := t.ready(o.ready, o.startTimeout); err != nil {
			return err
		}
	}
	for _, t := range targets {
		if err := drain(t.events, o.settle); err != nil {
			return t.exited(err)
		}
	}

	for i := 0; i < o.rounds; i++ {
		dir := i % 2
		want := o.open
		if dir == 1 {
			want = o.close
		}
		// Which program goes first alternates in pairs of rounds, so
		// neither is always pressed right after the other answered.
		for k := range targets {
			t := targets[(k+i/2)%len(targets)]
			if err := t.press(o, dir, want); err != nil {
				return fmt.Errorf("press %d: %w", i+1, err)
			}
		}
	}

	fmt.Printf("%d presses of %q in a %dx%d pty (synchronized output answered: %v; keylat's threads: %s): %s\n",
		o.rounds, o.key, o.cols, o.rows, o.sync, rtNote, strings.Join(argv, " "))
	all := func(d [2][]time.Duration) []time.Duration { return append(append([]time.Duration{}, d[0]...), d[1]...) }
	report("key to its frame's end, all", all(console.frame))
	report("  opening (frame holds "+o.open+")", console.frame[0])
	report("  closing (frame holds "+o.close+")", console.frame[1])
	report("key to the first byte after it", all(console.first))
	fmt.Printf("while waiting: %d reads, %d frames (the presses' own included)\n", console.chunks, console.frames)
	if o.floor {
		fl := targets[1]
		report("the floor in the same run: key to its frame", all(fl.frame))
	}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at the end: %s\n", strings.Join(strings.Fields(string(load))[:3], " "))
	}
	return nil
}

// realtime puts the calling thread at SCHED_FIFO priority 10, reset on
// fork (so no child inherits it).
func realtime() error {
	const resetOnFork = 0x40000000 // SCHED_RESET_ON_FORK
	param := struct{ priority int32 }{10}
	if _, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, uintptr(unix.SCHED_FIFO|resetOnFork), uintptr(unsafe.Pointer(&param))); e != 0 {
		return e
	}
	return nil
}

// echo is the floor's program: the terminal raw, it draws the ready text,
// then answers each key at once with a frame holding the open and close
// text in turn, bracketed as synchronized output, as the console does.
func echo(o options) error {
	t, err := unix.IoctlGetTermios(0, unix.TCGETS)
	if err != nil {
		return fmt.Errorf("stdin is not a terminal: %w", err)
	}
	raw := *t
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(0, unix.TCSETS, &raw); err != nil {
		return fmt.Errorf("raw mode: %w", err)
	}
	frame := func(text string) error {
		_, err := os.Stdout.WriteString("\x1b[?2026h\x1b[H\x1b[2J" + text + "\x1b[?2026l")
		return err
	}
	if err := frame(o.ready); err != nil {
		return err
	}
	buf := make([]byte, 64)
	for open := true; ; {
		n, err := os.Stdin.Read(buf)
		if err != nil {
			return nil // the pty closed: keylat is done
		}
		for range n {
			text := o.close
			if open {
				text = o.open
			}
			open = !open
			if err := frame(text); err != nil {
				return err
			}
		}
	}
}

// drain consumes events for d; it returns the pty's error if the console
// ended meanwhile.
func drain(events <-chan event, d time.Duration) error {
	end := time.After(d)
	for {
		select {
		case ev := <-events:
			if ev.err != nil {
				return ev.err
			}
		case <-end:
			return nil
		}
	}
}

// report prints the percentiles of ds (nearest rank).
func report(what string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	s := append([]time.Duration{}, ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	pct := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		return s[i]
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }
	fmt.Printf("%-44s n=%-4d p50 %6s ms  p90 %6s ms  p99 %6s ms  max %6s ms\n", what, len(s), ms(pct(0.50)), ms(pct(0.90)), ms(pct(0.99)), ms(s[len(s)-1]))
}
