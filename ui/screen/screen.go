package screen

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
)

// MinInterval is the shortest time between two frames of data (one frame
// of a 60 Hz display): a burst of data messages is drawn once per
// interval. The user's input is drawn at once, never held by it.
const MinInterval = 16 * time.Millisecond

// Options says where a program's frames go and what its terminal is.
type Options struct {
	// Out receives the frames.
	Out io.Writer
	// In is where the keys come from; nil leaves it to the
	// tea.ProgramOptions given to NewProgram (an SSH session's input).
	In io.Reader
	// TTY is the local terminal's input, in raw mode while the program
	// runs; nil over SSH, where the client keeps its own terminal raw.
	TTY *os.File
	// SizeOf is the local terminal's output, asked for its size at start
	// and on SIGWINCH; nil where the size comes from elsewhere (an SSH
	// session's window-change, sent as tea.WindowSizeMsg).
	SizeOf *os.File
	// Width and Height are the size at start where SizeOf is nil.
	Width, Height int
	// Profile is the terminal's colour profile: frames are downsampled to
	// it (tea.ColorProfileMsg changes it later).
	Profile colorprofile.Profile
	// Environ is the terminal's environment: the program's tea.EnvMsg, and
	// its TERM tells the renderer which sequences the terminal knows. Nil
	// means this process's.
	Environ []string
	// MapNewline says Out turns "\n" into "\r\n" (an SSH session's
	// emulated pty does; a local terminal in raw mode does not).
	MapNewline bool
	// Interval is the shortest time between frames; 0 means MinInterval.
	Interval time.Duration
	// Started, when set, is told the instant the program started, which
	// is the phase of Bubble Tea's own once-a-second ticker (started just
	// before the model's Init): a caller with a periodic timer of its own
	// puts it on that phase, so the process wakes once a second, not
	// twice (engine.AlignPoll).
	Started func(at time.Time)
	// Share, when set, is shared with other programs that often draw the
	// same frames (serve's sessions): a change of frame one of them
	// computed is written by the others as it is (see Transitions).
	// Such a change may be written to Out on the program's own
	// goroutine, which a write that waits on the terminal would hold
	// up: Out should not wait (serve's output queue).
	Share *Transitions
}

// Local returns the Options of a program on this process's terminal: keys
// from stdin, or from /dev/tty where stdin is not a terminal (as Bubble
// Tea does), frames to stdout, in the colour profile found there. done
// closes the /dev/tty it opened; call it after the program ended.
func Local() (o Options, done func(), err error) {
	env := os.Environ()
	o = Options{
		Out: os.Stdout, In: os.Stdin, TTY: os.Stdin, SizeOf: os.Stdout,
		Profile: colorprofile.Detect(os.Stdout, env), Environ: env,
	}
	done = func() {}
	if !term.IsTerminal(os.Stdin.Fd()) {
		in, out, err := tea.OpenTTY()
		if err != nil {
			return o, done, fmt.Errorf("screen: no terminal to read keys from: %w", err)
		}
		if out != in {
			out.Close()
		}
		o.In, o.TTY = in, in
		done = func() { in.Close() }
	}
	if !term.IsTerminal(os.Stdout.Fd()) {
		o.SizeOf = nil
	}
	return o, done, nil
}

// Program is a tea.Program drawn by this package. Its Run restores the
// terminal however the program ends; Send, Quit, Kill and Wait are
// Bubble Tea's.
type Program struct {
	*tea.Program
	w       *wrapper
	o       Options
	sizeErr error
}

// NewProgram makes the program of m drawn on o's terminal. opts are
// Bubble Tea's options (context, signals, an SSH session's input); those
// that concern drawing (output, renderer, frame rate, filter, size,
// colour profile, environment) are set here and replace any in opts.
func NewProgram(m tea.Model, o Options, opts ...tea.ProgramOption) *Program {
	env := o.Environ
	if env == nil {
		env = os.Environ()
	}
	interval := o.Interval
	if interval <= 0 {
		interval = MinInterval
	}
	p := &Program{o: o}
	width, height := o.Width, o.Height
	if o.SizeOf != nil {
		w, h, err := term.GetSize(o.SizeOf.Fd())
		if err != nil {
			p.sizeErr = fmt.Errorf("screen: reading the terminal's size: %w", err)
		}
		width, height = w, h
	}
	d := newDrawer(o.Out, env, o.MapNewline)
	d.share, d.canon = o.Share, o.Share != nil
	w := &wrapper{
		inner: m, d: d,
		width: width, height: height, profile: o.Profile, interval: interval,
		bg: tea.RequestBackgroundColor(), fg: tea.RequestForegroundColor(), cc: tea.RequestCursorColor(),
		pos: tea.RequestCursorPosition(), version: tea.RequestTerminalVersion(),
		clip:    reflect.TypeOf(tea.SetClipboard("")()),
		askSync: o.In != nil && asksSync(uv.Environ(env)),
		started: o.Started,
	}
	all := append(opts[:len(opts):len(opts)],
		// Bubble Tea's renderer off; its ticker, which cannot be
		// stopped, as slow as it goes: it flushes an empty buffer.
		tea.WithoutRenderer(), tea.WithFPS(1),
		tea.WithOutput(w.d), tea.WithFilter(w.filter),
		tea.WithEnvironment(env), tea.WithColorProfile(o.Profile), tea.WithWindowSize(width, height),
	)
	if o.In != nil {
		all = append(all, tea.WithInput(o.In))
	}
	p.w = w
	p.Program = tea.NewProgram(w, all...)
	return p
}

// Run runs the program and returns its model. The terminal is restored
// on every way out: quit, Kill, the context's end, a panic. A panic in
// drawing a frame ends the program with a *DrawPanicError.
func (p *Program) Run() (tea.Model, error) {
	if p.sizeErr != nil {
		return p.w.inner, p.sizeErr
	}
	if p.o.TTY != nil {
		fd := p.o.TTY.Fd()
		st, err := term.MakeRaw(fd)
		if err != nil {
			return p.w.inner, fmt.Errorf("screen: putting the terminal in raw mode: %w", err)
		}
		p.w.unraw = func() { _ = term.Restore(fd, st) }
		p.w.d.onPanic = p.w.unraw
	}
	// Killed from the drawing goroutine, which Kill does not wait for.
	p.w.d.failed = p.Program.Kill
	p.w.d.start()
	stopSize := func() {}
	if p.o.SizeOf != nil {
		stopSize = watchSize(p.o.SizeOf, p.Send)
	}
	_, err := p.Program.Run()
	stopSize()
	p.w.close()
	p.w.d.mu.Lock()
	panicked := p.w.d.panicked
	p.w.d.mu.Unlock()
	if panicked != nil {
		return p.w.inner, panicked
	}
	return p.w.inner, err //nolint:wrapcheck // Bubble Tea's errors, which callers test with errors.Is
}

// Written is how many bytes the program wrote to its terminal so far.
func (p *Program) Written() int64 {
	p.w.d.mu.Lock()
	defer p.w.d.mu.Unlock()
	return p.w.d.written
}

// asksSync says whether the terminal of env is asked if it knows
// synchronized output, as Bubble Tea's renderer asks: not over SSH, where
// what answers may not be the terminal that draws, unless it names a
// terminal known to answer right; not Apple's Terminal.
func asksSync(env uv.Environ) bool {
	term := env.Getenv("TERM")
	for _, known := range []string{"ghostty", "wezterm", "alacritty", "kitty", "rio"} {
		if strings.Contains(term, known) {
			return true
		}
	}
	_, ssh := env.LookupEnv("SSH_TTY")
	if _, wt := env.LookupEnv("WT_SESSION"); wt {
		return true
	}
	prog, hasProg := env.LookupEnv("TERM_PROGRAM")
	return !ssh && (!hasProg || !strings.Contains(prog, "Apple"))
}

// drawMsg draws the newest state once the interval after the last frame
// has passed.
type drawMsg struct{}

// wrapper is the model Bubble Tea runs: the program's model, drawn here.
// Its own View is empty, so the view Bubble Tea asks for after every
// message costs nothing.
type wrapper struct {
	inner         tea.Model
	d             *drawer
	width, height int
	profile       colorprofile.Profile
	interval      time.Duration
	shown         *frame    // the last frame handed to the drawer
	shownAt       time.Time // when
	armed         bool      // a drawMsg is on its way
	askSync       bool      // ask the terminal whether it knows synchronized output and grapheme widths
	closeOnce     sync.Once
	unraw         func()
	started       func(time.Time) // Options.Started

	// The queries a model may send (tea.RequestBackgroundColor, ...),
	// which this program writes itself at once, in order with the frames,
	// instead of leaving them to Bubble Tea's once-a-second flush.
	bg, fg, cc, pos, version tea.Msg
	clip                     reflect.Type
}

func (w *wrapper) Init() tea.Cmd {
	defer w.closeOnPanic()
	if w.started != nil {
		w.started(time.Now())
	}
	if w.askSync {
		// Bubble Tea asks these itself only when its renderer runs.
		_, _ = w.d.Write([]byte(ansi.RequestModeSynchronizedOutput + ansi.RequestModeUnicodeCore))
	}
	return w.guard(w.inner.Init())
}

func (w *wrapper) View() tea.View { return tea.View{} }

func (w *wrapper) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer w.closeOnPanic()
	now := time.Now()
	switch msg := msg.(type) {
	case drawMsg:
		w.armed = false
		if f, ok := w.frame(); ok && !f.same(w.shown) {
			w.show(f, now)
		}
		return w, nil
	case tea.WindowSizeMsg:
		w.width, w.height = msg.Width, msg.Height
	case tea.ColorProfileMsg:
		w.profile = msg.Profile
	case tea.ModeReportMsg:
		switch {
		case msg.Mode == ansi.ModeSynchronizedOutput && msg.Value == ansi.ModeReset:
			w.d.sync()
		case msg.Mode == ansi.ModeUnicodeCore &&
			(msg.Value == ansi.ModeReset || msg.Value == ansi.ModeSet || msg.Value == ansi.ModePermanentlySet):
			// Cells are measured as the terminal draws them, by grapheme
			// (as lipgloss lays the view out), as Bubble Tea's renderer
			// did: else an emoji with a variation selector is one cell
			// here and two there, and the rest of its line shifts. The
			// next frame is drawn whole.
			w.d.graphemes()
			w.shown = nil
		}
	}
	var cmd tea.Cmd
	w.inner, cmd = w.inner.Update(msg)
	return w, tea.Batch(w.guard(cmd), w.due(now, userInput(msg)))
}

// userInput says msg is the user's doing (a key, a paste, the mouse, a
// resize): its frame is drawn at once, never coalesced with the data's,
// since a person waits on it while data frames wait on nobody.
func userInput(msg tea.Msg) bool {
	switch msg.(type) {
	case tea.KeyMsg, tea.PasteMsg, tea.MouseMsg, tea.WindowSizeMsg:
		return true
	}
	return false
}

// due draws the view now if it changed and the interval since the last
// frame has passed, or arms one drawMsg for the interval's end. A view
// that did not change arms nothing: at rest nothing runs. The frame of
// the user's input (now) is drawn at once whatever the interval: a
// drawMsg armed for the data before it stays armed and draws only what
// changed after (if the drawer is busy with a data frame, this one goes
// next, replacing any frame not drawn yet).
func (w *wrapper) due(now time.Time, input bool) tea.Cmd {
	if w.armed && !input {
		return nil
	}
	f, ok := w.frame()
	if !ok || f.same(w.shown) {
		return nil
	}
	if wait := w.interval - now.Sub(w.shownAt); wait > 0 && !input {
		w.armed = true
		return tea.Tick(wait, func(time.Time) tea.Msg { return drawMsg{} })
	}
	w.show(f, now)
	return nil
}

// frame is the model's view now; none before the size is known. It is a
// value: the frame of every message is compared, and only one that is
// drawn is kept.
func (w *wrapper) frame() (frame, bool) {
	if w.width <= 0 || w.height <= 0 {
		return frame{}, false
	}
	return newFrame(w.inner.View(), w.width, w.height, w.profile), true
}

func (w *wrapper) show(f frame, now time.Time) {
	w.shown, w.shownAt = &f, now
	w.d.submit(&f)
}

// filter sees every message before Bubble Tea does.
func (w *wrapper) filter(_ tea.Model, msg tea.Msg) tea.Msg {
	switch m := msg.(type) {
	case tea.BatchMsg:
		// The Cmds of a batch run on Bubble Tea's goroutines: a panic in
		// one must restore the terminal before Bubble Tea reports it.
		return w.guardAll(m)
	case tea.SuspendMsg:
		// The consoles have no ^Z: stay, as wish does over SSH.
		return tea.ResumeMsg{}
	case tea.RawMsg:
		_, _ = w.d.Write([]byte(fmt.Sprint(m.Msg)))
		return nil
	}
	var seq string
	switch {
	case msg == w.bg:
		seq = ansi.RequestBackgroundColor
	case msg == w.fg:
		seq = ansi.RequestForegroundColor
	case msg == w.cc:
		seq = ansi.RequestCursorColor
	case msg == w.pos:
		seq = ansi.RequestCursorPositionReport
	case msg == w.version:
		seq = ansi.RequestNameVersion
	case reflect.TypeOf(msg) == w.clip:
		seq = ansi.SetSystemClipboard(reflect.ValueOf(msg).String())
	default:
		return msg
	}
	_, _ = w.d.Write([]byte(seq))
	return nil
}

// guard runs cmd, restoring the terminal if it panics, before Bubble
// Tea's own recovery prints the panic: printed on the alternate screen,
// it would vanish with it.
func (w *wrapper) guard(cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		defer w.closeOnPanic()
		return w.guardAll(cmd())
	}
}

// guardAll guards the Cmds of a batch or a sequence that msg carries. The
// filter sees only the batches sent as messages: a batch or a sequence
// returned by a Cmd of a batch, or in a sequence, Bubble Tea runs itself,
// on goroutines whose panic it reports with the terminal still raw and on
// the alternate screen, where the report vanishes.
func (w *wrapper) guardAll(msg tea.Msg) tea.Msg {
	// tea.Sequence's message type is not exported: it is known by its
	// elements, as tea.BatchMsg is.
	v := reflect.ValueOf(msg)
	if v.Kind() != reflect.Slice || v.Type().Elem() != reflect.TypeFor[tea.Cmd]() {
		return msg
	}
	// A copy: the slice is the Cmd's, which may run again.
	g := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
	for i := range v.Len() {
		if c, _ := v.Index(i).Interface().(tea.Cmd); c != nil {
			g.Index(i).Set(reflect.ValueOf(w.guard(c)))
		}
	}
	return g.Interface()
}

func (w *wrapper) closeOnPanic() {
	if r := recover(); r != nil {
		w.close()
		panic(r)
	}
}

// close stops drawing and restores the terminal, once.
func (w *wrapper) close() {
	w.closeOnce.Do(func() {
		w.d.stop()
		if w.unraw != nil {
			w.unraw()
		}
	})
}
