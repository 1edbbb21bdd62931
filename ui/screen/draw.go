package screen

import (
	"bytes"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
)

// DrawPanicError is the error of a program whose drawing panicked (a bug
// in drawing a frame). It is a tea.ErrProgramKilled and a
// tea.ErrProgramPanic, as a panic in the program's model is.
type DrawPanicError struct {
	Value any    // what the panic said
	Stack []byte // where
}

func (e *DrawPanicError) Error() string {
	return fmt.Sprintf("%v: %v: screen: drawing a frame panicked: %v", tea.ErrProgramKilled, tea.ErrProgramPanic, e.Value)
}

// Unwrap lets errors.Is find tea.ErrProgramKilled and tea.ErrProgramPanic.
func (e *DrawPanicError) Unwrap() []error { return []error{tea.ErrProgramKilled, tea.ErrProgramPanic} }

// frame is what one view puts on the terminal: its content and the modes
// it asks for, at the size and colour profile it was made for.
type frame struct {
	content       string
	width, height int
	profile       colorprofile.Profile
	alt           bool
	mouse         tea.MouseMode
	title         string
	focus         bool
	noPaste       bool
	keys          tea.KeyboardEnhancements
	cursor        *tea.Cursor
}

func newFrame(v tea.View, w, h int, p colorprofile.Profile) frame {
	return frame{
		content: v.Content, width: w, height: h, profile: p,
		alt: v.AltScreen, mouse: v.MouseMode, title: v.WindowTitle, focus: v.ReportFocus,
		noPaste: v.DisableBracketedPasteMode, keys: v.KeyboardEnhancements, cursor: v.Cursor,
	}
}

// same reports whether f would draw exactly what g drew.
func (f *frame) same(g *frame) bool {
	if g == nil {
		return false
	}
	if (f.cursor == nil) != (g.cursor == nil) || f.cursor != nil && *f.cursor != *g.cursor {
		return false
	}
	return f.content == g.content && f.width == g.width && f.height == g.height && f.profile == g.profile &&
		f.alt == g.alt && f.mouse == g.mouse && f.title == g.title && f.focus == g.focus &&
		f.noPaste == g.noPaste && f.keys == g.keys
}

// drawer owns the terminal: every byte the program writes goes through it,
// under mu, so a frame, a query and the restoring never interleave.
type drawer struct {
	mu      sync.Mutex
	out     io.Writer
	buf     bytes.Buffer // the write being made
	scr     *uv.TerminalRenderer
	cells   uv.ScreenBuffer
	last    *frame   // on the terminal now; nil before the first frame
	lines   []string // last's content, line by line
	indep   bool     // each of lines starts with the default pen
	closed  bool
	written int64 // bytes written to out
	frames  int   // frames drawn
	// synced: the terminal said it knows synchronized output (mode
	// 2026), so each frame is shown at once, not as it is written.
	synced bool
	// wide: the terminal said it knows mode 2027 (grapheme clusters'
	// widths), so cells are measured by grapheme, with the mode on;
	// wideOn: the mode is on.
	wide, wideOn bool

	// share holds the frame changes the drawers of other programs
	// computed (nil: this drawer computes its own); env and mapNl are
	// what its renderer was made with, the class of the changes it may
	// take from there. canon ends every frame in the canonical state
	// Transitions needs (set with share; tests set it alone).
	share *Transitions
	env   string
	mapNl bool
	canon bool
	// environ is the environment the renderer was made with, for the
	// class's painters (Transitions) made like it.
	environ []string
	// paints counts the renderer's paints (catching up included): what
	// a change costs, for the tests; drawn, when set (by tests), is
	// told of each frame drawn, in order.
	paints int
	drawn  func(*frame)
	// rlast is the frame the renderer drew last: last, unless frames
	// were written from share since, which the renderer catches up
	// with (catchUp) before it computes a change again. lastHash is
	// last's content hash when lastHashed.
	rlast      *frame
	lastHash   uint64
	lastHashed bool
	// widePending: the terminal said it measures graphemes, and the
	// next frame turns that on (after the renderer caught up in the old
	// way); reparse: it was turned on and no frame was drawn since.
	widePending, reparse bool
	// direct holds a frame written directly (direct.go); cellRunes, the
	// runes found one cell wide there or not.
	directOut bytes.Buffer
	cellRunes map[rune]bool
	// directs counts the frames written directly; noDirect writes none
	// so; splits counts the frames' contents split into lines (all for
	// the tests).
	directs  int
	noDirect bool
	splits   int

	slot    sync.Mutex
	started bool   // run was started
	next    *frame // the newest frame not drawn yet
	wake    chan struct{}
	quit    chan struct{}
	stopped chan struct{}
	onPanic func() // gives the terminal back its mode when drawing panics
	// failed ends the program once drawing panicked; panicked is why
	// (under mu).
	failed   func()
	panicked *DrawPanicError
}

// newDrawer draws on out. env's TERM tells the renderer which sequences
// the terminal knows; mapNl says out turns "\n" into "\r\n" (an SSH
// session's emulated pty), which lets the renderer move down with "\n".
func newDrawer(out io.Writer, env []string, mapNl bool) *drawer {
	d := &drawer{out: out, wake: make(chan struct{}, 1), quit: make(chan struct{}), stopped: make(chan struct{}),
		env: envKey(env), mapNl: mapNl, environ: env}
	scr := uv.NewTerminalRenderer(&d.buf, env)
	scr.SetRelativeCursor(true)
	scr.SetFullscreen(false)
	scr.SetTabStops(-1)
	scr.SetBackspace(false)
	scr.SetMapNewline(mapNl)
	// Hard-scroll optimisation hashes every line of every frame to find
	// lines that moved: most of a frame's drawing cost in serve's idle
	// sessions, where what changes is a figure in place, never a scroll.
	// A list scrolled by a key is rewritten line by line instead: more
	// bytes once, on a key, against CPU on every frame.
	scr.SetScrollOptim(false)
	d.scr = scr
	return d
}

// Write writes p to the terminal between frames: Bubble Tea's own output,
// a query. Nothing is written once the terminal was restored.
func (d *drawer) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.write(p)
	}
	return len(p), nil
}

// stop ends the drawing goroutine and restores the terminal; a frame not
// drawn yet is dropped. It may be called more than once, from any
// goroutine.
func (d *drawer) stop() {
	d.slot.Lock()
	select {
	case <-d.quit:
	default:
		close(d.quit)
	}
	started := d.started
	d.slot.Unlock()
	if started {
		<-d.stopped
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.restore(true)
	}
}

// start starts the drawing goroutine.
func (d *drawer) start() {
	d.slot.Lock()
	defer d.slot.Unlock()
	select {
	case <-d.quit:
		return // stopped before it started
	default:
	}
	d.started = true
	go d.run()
}

// run draws the frames handed to submit, the newest first, until stop.
func (d *drawer) run() {
	defer close(d.stopped)
	for {
		select {
		case <-d.quit:
			return
		case <-d.wake:
		}
		d.drawSafely()
	}
}

// drawSafely draws the frame handed to submit, if one waits. A panic in
// drawing ends the program, not the process: this goroutine is no one's
// to recover, and a served console's panic would end every session of
// the server. The terminal is restored (cooked, the alternate screen
// left), nothing more is drawn, and Run returns the panic as a
// *DrawPanicError.
//
// The frame is taken with d.mu held, so a frame that submit draws at once
// (drawStoredNow, under d.mu, when none waits) is never drawn before one
// handed over earlier.
func (d *drawer) drawSafely() {
	d.mu.Lock()
	defer d.unlockAfterDraw()
	d.slot.Lock()
	f := d.next
	d.next = nil
	d.slot.Unlock()
	if f != nil && !d.closed {
		d.draw(f)
	}
}

// unlockAfterDraw unlocks d.mu after drawing, deferred: a panic in
// drawing restores the terminal and ends the program (drawSafely).
func (d *drawer) unlockAfterDraw() {
	if r := recover(); r != nil {
		d.panicked = &DrawPanicError{Value: r, Stack: debug.Stack()}
		d.restore(false)
		d.mu.Unlock()
		if d.onPanic != nil {
			d.onPanic()
		}
		if d.failed != nil {
			d.failed()
		}
		return
	}
	d.mu.Unlock()
}

// submit hands f to the drawing goroutine; a frame it has not drawn yet
// is replaced, since nobody would see it. A change another drawer
// computed is written at once, on the caller's goroutine, when nothing
// waits for the terminal: it is a look-up and a write that never waits
// on the client (serve's output queue), and it spares waking the
// drawing goroutine for each frame of each idle session.
func (d *drawer) submit(f *frame) {
	if d.share != nil && d.drawStoredNow(f) {
		return
	}
	d.slot.Lock()
	d.next = f
	d.slot.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// drawStoredNow writes f from the Transitions and says whether it did:
// only when the drawer is idle (no frame drawn or waiting), f is a
// shareable change stored already, and no drawer of the class is
// computing one (whose wait would hold up the caller).
func (d *drawer) drawStoredNow(f *frame) (drawn bool) {
	if !d.mu.TryLock() {
		return false
	}
	defer d.unlockAfterDraw()
	d.slot.Lock()
	waiting := d.next != nil
	d.slot.Unlock()
	if waiting || d.closed || d.widePending || !d.shareable(f) {
		return false
	}
	t := d.share
	from := d.last
	if from != nil && !d.lastHashed {
		d.lastHash, d.lastHashed = t.hash(from), true
	}
	toHash := t.hash(f)
	r := t.class(transClass{env: d.env, mapNl: d.mapNl, synced: d.synced, wide: d.wide, wideOn: d.wideOn, reparse: d.reparse})
	if !r.mu.TryLock() {
		return false
	}
	out := r.find(from, d.lastHash, f, toHash)
	r.mu.Unlock()
	if out == nil {
		return false
	}
	t.hits.Add(1)
	d.wrote(f)
	d.lastHash, d.lastHashed = toHash, true
	d.write(out)
	if d.drawn != nil {
		d.drawn(f)
	}
	return true
}

// draw puts f on the terminal: the modes that changed, then the cells that
// changed, in one write; with a Transitions, the bytes another drawer
// computed for the same change when there are some. Called with d.mu
// held.
func (d *drawer) draw(f *frame) {
	if d.drawn != nil {
		defer d.drawn(f)
	}
	if d.widePending {
		// The frame on the terminal was parsed the old way: the
		// renderer catches up with it that way first.
		d.catchUp()
		d.widePending = false
		d.wide, d.lines, d.reparse = true, nil, true
	}
	if d.share != nil && d.shareable(f) {
		d.drawShared(f)
		return
	}
	// paint takes the lines the direct path split, which refuses a frame
	// at rest (one line changed) after splitting it: a frame is split
	// once.
	var lines []string
	if !d.noDirect {
		var done bool
		if lines, done = d.drawDirect(f); done {
			return
		}
	}
	d.catchUp()
	d.paint(f, lines, false)
	d.lastHashed = false
	d.write(d.buf.Bytes())
}

// drawDirect writes f's changed lines directly when most of them changed
// and each can be (direct.go), then brings the renderer up to f, after
// the write: the frame does not wait for the renderer. done says it
// wrote f; lines are f's content split into lines, nil when it refused
// f before splitting it. Called with d.mu held.
func (d *drawer) drawDirect(f *frame) (lines []string, done bool) {
	if d.share != nil || d.canon || d.last == nil || !f.alt {
		return nil, false
	}
	lines = d.split(f)
	changed, ok := d.directable(f, lines)
	if !ok || !d.direct(&d.directOut, f, lines, changed) {
		return lines, false
	}
	d.write(d.directOut.Bytes())
	d.last = f
	d.frames++
	d.directs++
	d.lastHashed = false
	// The renderer catches up with f (what catchUp does: directable
	// found it at the frame before f), from the lines split above.
	d.paint(f, lines, true)
	// The renderer's cursor is where the frame left the terminal's.
	x, y := directCursor(f)
	d.scr.MoveTo(x, y)
	_ = d.scr.Flush()
	d.buf.Reset()
	return lines, true
}

// shareable says whether the change from the last frame to f may be taken
// from (and given to) the Transitions: full-screen frames of one size
// and colour profile, whose change depends on the two frames alone.
func (d *drawer) shareable(f *frame) bool {
	l := d.last
	return f.alt && (l == nil || l.alt && l.width == f.width && l.height == f.height && l.profile == f.profile)
}

// drawShared draws f with the change stored in d.share, or computes it
// and stores it. The drawers of one class wait for the one computing a
// change, which they then write from the store. Called with d.mu held.
func (d *drawer) drawShared(f *frame) {
	t := d.share
	from := d.last
	if from != nil && !d.lastHashed {
		d.lastHash, d.lastHashed = t.hash(from), true
	}
	fromHash, toHash := d.lastHash, t.hash(f)
	c := transClass{env: d.env, mapNl: d.mapNl, synced: d.synced, wide: d.wide, wideOn: d.wideOn, reparse: d.reparse}
	r := t.class(c)
	r.mu.Lock()
	out := r.find(from, fromHash, f, toHash)
	if out != nil {
		r.mu.Unlock()
		t.hits.Add(1)
		d.wrote(f)
	} else {
		painted := false
		// Unlocked however painting ends: a panic here must not
		// stop the other sessions of the class.
		func() {
			defer r.mu.Unlock()
			t.misses.Add(1)
			if from != nil && c.painted() {
				out, painted = t.paintWith(r, c, d.environ, from, fromHash, f, toHash)
			}
			if !painted {
				d.catchUp()
				d.paint(f, nil, false)
				out = bytes.Clone(d.buf.Bytes())
			}
			r.add(transition{from: from, fromHash: fromHash, to: f, toHash: toHash, out: out})
		}()
		if painted {
			d.wrote(f)
		}
	}
	d.lastHash, d.lastHashed = toHash, true
	d.write(out)
}

// wrote notes that the terminal shows f, written from bytes the
// drawer's renderer did not compute: what paint does besides drawing,
// the renderer left behind. Called with d.mu held.
func (d *drawer) wrote(f *frame) {
	if d.wide {
		d.wideOn = true
	}
	d.reparse = false
	d.last = f
	d.frames++
}

// catchUp brings the renderer to the frame on the terminal after frames
// written from the Transitions, throwing away what it would write: from
// then on it computes changes from what the terminal shows. Called with
// d.mu held.
func (d *drawer) catchUp() {
	if d.rlast != d.last {
		d.paint(d.last, nil, true)
	}
}

// paint brings the renderer from the frame it drew last to f and leaves
// in d.buf what takes a terminal there: the modes that changed, then the
// cells that changed. Unless catching up, which paints a frame already
// on the terminal and writes nothing, f is then the terminal's frame.
// lines are f's content split into lines when the caller has them (they
// are kept, never changed), nil to split it here. Called with d.mu held.
func (d *drawer) paint(f *frame, lines []string, catchingUp bool) {
	d.paints++
	last := d.rlast
	scr := d.scr
	d.buf.Reset()
	if d.synced {
		d.buf.WriteString(ansi.SetModeSynchronizedOutput)
	}
	if d.wide && !d.wideOn && !catchingUp {
		d.buf.WriteString(ansi.SetModeUnicodeCore)
		d.wideOn = true
	}
	// Leaving or entering the alternate screen, and hiding the cursor,
	// lead the frame: the terminal keeps keyboard modes per screen, and
	// some keep the cursor's visibility per screen too.
	switchedScreen := last == nil || f.alt != last.alt
	if switchedScreen {
		if last != nil {
			d.buf.WriteString(keysOff())
		}
		switch {
		case f.alt:
			scr.SaveCursor()
			scr.SetFullscreen(true)
			scr.SetRelativeCursor(false)
			d.buf.WriteString(ansi.SetModeAltScreenSaveCursor)
		case last != nil:
			scr.SetRelativeCursor(true)
			scr.SetFullscreen(false)
			d.buf.WriteString(ansi.ResetModeAltScreenSaveCursor)
			scr.RestoreCursor()
		}
		scr.Erase()
	}
	if f.cursor == nil && (switchedScreen || last.cursor != nil) {
		d.buf.WriteString(ansi.ResetModeTextCursorEnable)
	}
	if switchedScreen {
		d.buf.WriteString(keysOn(f.keys))
	} else if f.keys != last.keys {
		d.buf.WriteString(ansi.KittyKeyboard(kittyFlags(f.keys), 1))
	}
	if last == nil || f.profile != last.profile {
		scr.SetColorProfile(f.profile)
		scr.Erase()
	}
	if last == nil || f.noPaste != last.noPaste {
		switch {
		case !f.noPaste:
			d.buf.WriteString(ansi.SetModeBracketedPaste)
		case last != nil:
			d.buf.WriteString(ansi.ResetModeBracketedPaste)
		}
	}
	if last == nil || f.focus != last.focus {
		switch {
		case f.focus:
			d.buf.WriteString(ansi.SetModeFocusEvent)
		case last != nil:
			d.buf.WriteString(ansi.ResetModeFocusEvent)
		}
	}
	if last == nil || f.mouse != last.mouse {
		if last != nil && last.mouse != tea.MouseModeNone {
			d.buf.WriteString(mouseOff)
		}
		switch f.mouse {
		case tea.MouseModeCellMotion:
			d.buf.WriteString(ansi.SetModeMouseButtonEvent + ansi.SetModeMouseExtSgr)
		case tea.MouseModeAllMotion:
			d.buf.WriteString(ansi.SetModeMouseAnyEvent + ansi.SetModeMouseExtSgr)
		}
	}
	if (last == nil && f.title != "") || (last != nil && f.title != last.title) {
		d.buf.WriteString(ansi.SetWindowTitle(f.title))
	}

	// The cells. An inline frame (no alternate screen) is as high as its
	// content; a full-screen one fills the window.
	if lines == nil {
		lines = d.split(f)
	}
	h := f.height
	if !f.alt {
		h = min(len(lines), f.height)
	}
	resized := true
	switch {
	case d.cells.RenderBuffer == nil:
		d.cells = uv.NewScreenBuffer(f.width, h)
		scr.Resize(f.width, h)
	case d.cells.Width() != f.width || d.cells.Height() != h:
		d.cells.Resize(f.width, h)
		d.cells.Touched = nil
		scr.Resize(f.width, h)
		scr.Erase()
	default:
		resized = false
	}
	if d.wide {
		d.cells.Method = ansi.GraphemeWidth
	}
	// Parsing a styled frame into cells is most of a frame's cost (about
	// 3 ms for a dense 160x48 one): only the lines that changed are
	// parsed again, where every line starts with the default pen, so a
	// line's cells depend on its own text only.
	indep := independent(lines)
	if !resized && indep && d.indep && len(lines) == len(d.lines) {
		shown := lines[:min(len(lines), h)]
		for y, l := range shown {
			if l != d.lines[y] {
				uv.NewStyledString(l).Draw(d.cells, uv.Rect(0, y, f.width, 1))
			}
		}
		// Ultraviolet erases a blank bottom from the row above the blank
		// run (clearBottom moves to top-1 of a 1-based top): that row is
		// drawn again only if it is touched, and an untouched one stayed
		// erased on the terminal (hrev11).
		top := len(shown)
		for top > 0 && blankRow(d.cells.RenderBuffer, top-1, f.width) {
			top--
		}
		if top > 0 && top < len(shown) && shown[top-1] == d.lines[top-1] && !slices.Equal(shown[top:], d.lines[top:len(shown)]) {
			uv.NewStyledString(shown[top-1]).Draw(d.cells, uv.Rect(0, top-1, f.width, 1))
		}
	} else {
		d.cells.Clear()
		uv.NewStyledString(f.content).Draw(d.cells, d.cells.Bounds())
	}
	d.lines, d.indep = lines, indep
	scr.Render(d.cells.RenderBuffer)
	switch {
	case f.cursor != nil:
		scr.MoveTo(f.cursor.X, f.cursor.Y)
	case d.canon:
		// Where the last cell changed is no part of the frame: the
		// next change would depend on it, and so on the frames before.
		scr.MoveTo(0, 0)
	}
	_ = scr.Flush() // into d.buf: cannot fail
	if f.cursor != nil && (switchedScreen || last.cursor == nil) {
		d.buf.WriteString(ansi.SetModeTextCursorEnable)
	}
	d.rlast = f
	if catchingUp {
		d.buf.Reset()
		return
	}
	d.last = f
	d.frames++
	d.reparse = false
	if d.synced {
		d.buf.WriteString(ansi.ResetModeSynchronizedOutput)
	}
}

// split is f's content line by line, a new slice (the callers keep it).
func (d *drawer) split(f *frame) []string {
	d.splits++
	return strings.Split(f.content, "\n")
}

// blankRow says row y of buf is what ultraviolet's clearBottom counts as
// blank: every cell an unstyled space. A row of styled spaces (a
// selected row on a background) is not: counting it blank left the row
// above it untouched while the renderer erased from it (hrev12).
func blankRow(buf *uv.RenderBuffer, y, w int) bool {
	for x := range w {
		if c := buf.CellAt(x, y); c == nil || !c.Equal(&uv.EmptyCell) {
			return false
		}
	}
	return true
}

// independent reports whether each line of a frame starts with the
// default pen: every line but the last ends with its styles reset (or
// sets none, after a line that ended so), and no hyperlink or carriage
// return carries anything from one line to the next.
func independent(lines []string) bool {
	for _, l := range lines[:len(lines)-1] {
		i := strings.LastIndexByte(l, '\x1b')
		if i < 0 {
			if strings.IndexByte(l, '\r') >= 0 {
				return false
			}
			continue
		}
		rest := l[i:]
		if !strings.HasPrefix(rest, "\x1b[m") && !strings.HasPrefix(rest, "\x1b[0m") ||
			strings.Contains(l, "\x1b]") || strings.IndexByte(l, '\r') >= 0 {
			return false
		}
	}
	return true
}

// graphemes measures cells by grapheme from the next frame on, which is
// parsed whole.
func (d *drawer) graphemes() {
	d.mu.Lock()
	d.widePending = true
	d.mu.Unlock()
}

// sync turns synchronized output on for the frames to come.
func (d *drawer) sync() {
	d.mu.Lock()
	d.synced = true
	d.mu.Unlock()
}

// write sends b to the terminal in one write. Called with d.mu held.
func (d *drawer) write(b []byte) {
	if len(b) == 0 {
		return
	}
	// A terminal that cannot be written to (a client gone) ends the
	// program through its input; the frames have nobody to tell.
	n, _ := d.out.Write(b)
	d.written += int64(n)
}

// restore leaves the terminal as the program found it: keyboard, mouse,
// focus and paste modes off, the title cleared, the alternate screen left
// (or the inline frame's last line kept), the cursor shown. Called with
// d.mu held; only once, and nothing is drawn after it. moveDown puts the
// cursor under an inline frame first, with the renderer, which is not
// trusted after it panicked.
func (d *drawer) restore(moveDown bool) {
	d.closed = true
	last := d.last
	if last == nil {
		return
	}
	if moveDown {
		// Before the restoring is written into d.buf: catching up
		// paints into it.
		d.catchUp()
	}
	d.buf.Reset()
	d.buf.WriteString(keysOff())
	if last.mouse != tea.MouseModeNone {
		d.buf.WriteString(mouseOff)
	}
	if last.focus {
		d.buf.WriteString(ansi.ResetModeFocusEvent)
	}
	if !last.noPaste {
		d.buf.WriteString(ansi.ResetModeBracketedPaste)
	}
	if last.title != "" {
		d.buf.WriteString(ansi.SetWindowTitle(""))
	}
	if moveDown && d.cells.RenderBuffer != nil {
		d.scr.MoveTo(0, d.cells.Height()-1)
		_ = d.scr.Flush()
	}
	if last.alt {
		d.buf.WriteString(ansi.ResetModeAltScreenSaveCursor)
	} else {
		d.buf.WriteString("\r\n" + ansi.EraseScreenBelow)
	}
	if d.wideOn {
		d.buf.WriteString(ansi.ResetModeUnicodeCore)
	}
	d.buf.WriteString(ansi.SetModeTextCursorEnable)
	d.write(d.buf.Bytes())
}

const mouseOff = ansi.ResetModeMouseButtonEvent + ansi.ResetModeMouseAnyEvent + ansi.ResetModeMouseExtSgr

// keysOn turns the keyboard enhancements ke on as Bubble Tea's renderer
// did (modifyOtherKeys and one entry on the kitty stack), so keys read the
// same as they did under it.
func keysOn(ke tea.KeyboardEnhancements) string {
	return ansi.SetModifyOtherKeys2 + ansi.PushKittyKeyboard(kittyFlags(ke))
}

// keysOff undoes keysOn for the screen being left.
func keysOff() string { return ansi.ResetModifyOtherKeys + ansi.PopKittyKeyboard(1) }

// kittyFlags are the kitty keyboard flags of ke: basic disambiguation
// always, as Bubble Tea asks for.
func kittyFlags(ke tea.KeyboardEnhancements) int {
	flags := ansi.KittyDisambiguateEscapeCodes
	if ke.ReportEventTypes {
		flags |= ansi.KittyReportEventTypes
	}
	if ke.ReportAlternateKeys {
		flags |= ansi.KittyReportAlternateKeys
	}
	if ke.ReportAllKeysAsEscapeCodes {
		flags |= ansi.KittyReportAllKeysAsEscapeCodes
	}
	if ke.ReportAssociatedText {
		flags |= ansi.KittyReportAssociatedKeys
	}
	return flags
}
