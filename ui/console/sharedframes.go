package console

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// Frames lets the consoles fed the same snapshots (serve's sessions)
// compose a frame once for all of those in one state: idle viewers of a
// node show the same frame, and composing it was the largest part of
// what each one cost.
//
// It is exact, not a guess, and conservative: only a read-only console
// that never had a key, a mouse event or a paste, with no layer over its
// main screen and not showing the past, takes part (one that had a key
// leaves for good), and it takes a frame only when every input of its
// composition equals the composer's: the adopted snapshot and its
// derivation (shared by the Deriver), the size, the theme and ASCII,
// every pane's cursor, scroll and size, the kernels' follow, sort and
// filter, the flash, what the desk said, the graphs' span, the history
// rings (compared sample by sample), and the instant, within the span in
// which the composer's frame reads the same (its staleAt and the
// "updated ... ago" it shows, as a console's own cached frame).
type Frames struct {
	mu   sync.Mutex
	ents [framesLen]sharedFrame
	next int

	hits, misses atomic.Int64
}

// framesLen is how many recent frames are kept: at rest the sessions in
// one state compose within milliseconds of each other, a few states at a
// time (sizes, themes).
const framesLen = 8

// NewFrames returns an empty store.
func NewFrames() *Frames { return &Frames{} }

// Stats says how many frames were taken from the store (hits) and how
// many composed by the consoles taking part (misses).
func (f *Frames) Stats() (hits, misses int64) { return f.hits.Load(), f.misses.Load() }

// frameKey is what a main-screen composition depends on, besides the
// history rings and the instant.
type frameKey struct {
	snap     *model.Snapshot
	d        *render.Derived
	w, h     int
	theme    themeKey
	ascii    bool
	th       kit.Thresholds
	focus    pane
	lists    [numPanes]listState
	follow   bool
	sortCol  string
	sortDesc bool
	filter   string
	byAgent  bool
	// flash is the flash but for when it runs out (flashKey).
	flash kit.Flash
	desk  string
	graph graphSpan
	opts  optsKey
	// closed: the header says the engine stopped.
	closed bool
}

// themeKey names the theme: one set explicitly by its pointer, else the
// built-in one picked by background and NO_COLOR (themes.Builtin parses
// afresh each time, so those pointers differ between consoles).
type themeKey struct {
	explicit         *themes.Theme
	dark, noColor    bool
	explicitlyChosen bool
}

// optsKey is what of the options the main screen shows.
type optsKey struct {
	readOnly, demo, history bool
	quitIs, nodeName        string
}

// listState is a pane's cursor, scroll, size and focus.
type listState struct {
	w, h, cursor, offset int
	focused              bool
}

// sharedFrame is a composed frame and what its composer left behind.
type sharedFrame struct {
	key          frameKey
	hist         history
	frame        string
	lay          layout
	geoms        []graphGeom
	composedAt   time.Time
	staleAt      time.Time
	flashUntil   time.Time
	shownUpdated kit.Span
	after        [numPanes]listState
	// cols are the kernels' columns the frame drew, which a click on
	// their header reads.
	cols []kernCol
}

// lists returns the panes' lists, in pane order.
func (a *App) lists() [numPanes]*list {
	var ls [numPanes]*list
	for p, pm := range a.panes {
		switch x := pm.(type) {
		case *devicesPane:
			ls[p] = &x.list
		case *kernelsPane:
			ls[p] = &x.list
		case *agentsPane:
			ls[p] = &x.list
		case *issuesPane:
			ls[p] = &x.list
		}
	}
	return ls
}

// listStates returns the panes' states; ok is false for a pane that is
// not a list (none today), which keeps the console off the shared path.
func (a *App) listStates() (st [numPanes]listState, ok bool) {
	for p, l := range a.lists() {
		if l == nil {
			return st, false
		}
		st[p] = listState{l.W, l.H, l.Cursor, l.offset, l.focused}
	}
	return st, true
}

// shareKey returns the key of the frame the console would compose now;
// ok is false when it does not take part.
func (a *App) shareKey() (k frameKey, ok bool) {
	f := a.opts.Frames
	if f == nil || a.shareOff || !a.opts.ReadOnly || a.d == nil || a.Snap == nil ||
		len(a.layers) > 0 || a.past.on || !a.past.outside.IsZero() || a.verdict.word != "" || a.dFor != (derivedFor{a.St, a.Th}) {
		return k, false
	}
	lists, ok := a.listStates()
	if !ok {
		return k, false
	}
	w, h := a.Size()
	tk := themeKey{dark: a.theme.dark, noColor: a.theme.noColor, explicitlyChosen: a.theme.explicit}
	if a.theme.explicit {
		tk.explicit = a.St.Theme
	}
	var desk strings.Builder
	for _, spans := range [][]kit.Span{a.deskHold, a.deskWrite} {
		for _, s := range spans {
			desk.WriteString(string(rune('0' + int(s.Lvl))))
			desk.WriteString(s.Text)
			desk.WriteByte(0)
		}
		desk.WriteByte(1)
	}
	return frameKey{
		snap: a.Snap, d: a.d, w: w, h: h, theme: tk, ascii: a.St.ASCII, th: a.Th,
		focus: a.focus, lists: lists,
		follow: a.Kernels.follow, sortCol: a.Kernels.sortCol, sortDesc: a.Kernels.sortDesc,
		filter: a.Kernels.Filter, byAgent: a.devices.byAgent,
		flash: flashKey(a.Flash), desk: desk.String(), graph: a.graph,
		opts: optsKey{
			readOnly: a.opts.ReadOnly, demo: a.opts.DemoRestart != nil, history: a.opts.History != "",
			quitIs: a.opts.QuitIs, nodeName: a.opts.NodeName,
		},
		closed: a.Closed,
	}, true
}

// flashKey is f without its end: consoles that adopted a snapshot with a
// new issue milliseconds apart flash it until instants as far apart, and
// draw the same footer. The end is only when the frame goes stale
// (sharedStaleAt).
func flashKey(f kit.Flash) kit.Flash {
	f.Until = time.Time{}
	return f
}

// sharedStaleAt is when the frame of e goes stale for a console whose
// flash runs out at until (its own composition's staleAt), and whether
// that is known: the composer's staleAt is the earliest of its texts'
// turns and its own flash's end, so a flash that ends later than the
// composer's, where that end was the earliest, hides the texts' turn.
func sharedStaleAt(e *sharedFrame, flash kit.Flash) (time.Time, bool) {
	if flash.Text == "" {
		return e.staleAt, true
	}
	until := flash.Until
	switch {
	case !e.staleAt.IsZero() && e.staleAt.Before(e.flashUntil):
		// A text turns before the composer's flash ends.
	case !until.After(e.flashUntil):
		// Its flash ends no later than the composer's, which was the
		// earliest.
	default:
		return time.Time{}, false
	}
	if e.staleAt.IsZero() || until.Before(e.staleAt) {
		return until, true
	}
	return e.staleAt, true
}

// takeShared sets the console's frame from one composed by another
// console in the same state, and says whether it did.
func (a *App) takeShared(k frameKey) bool {
	f := a.opts.Frames
	f.mu.Lock()
	defer f.mu.Unlock()
	// The instant is read with the lock held: every frame stored was
	// composed before it, and one composed after it is not seen. (Read
	// before, a console kept waiting for the lock missed the frames
	// stored meanwhile as composed after its instant: most of them at
	// rest, where the sessions draw at one instant.)
	now := a.Now()
	for i := range f.ents {
		e := &f.ents[i]
		if e.frame == "" || e.key != k || now.Before(e.composedAt) {
			continue
		}
		staleAt, known := sharedStaleAt(e, a.Flash)
		if !known || !staleAt.IsZero() && !now.Before(staleAt) {
			continue
		}
		if u, _ := updatedSpan(a.Snap, now); u != e.shownUpdated || !histSame(a.hist, e.hist) {
			continue
		}
		a.composedAt, a.staleAt, a.shownUpdated = now, staleAt, e.shownUpdated
		a.frame, a.lay = e.frame, e.lay
		a.geoms = append(a.geoms[:0], e.geoms...)
		a.Kernels.cols = append(a.Kernels.cols[:0:0], e.cols...)
		for p, l := range a.lists() {
			s := e.after[p]
			l.W, l.H, l.Cursor, l.offset, l.focused = s.w, s.h, s.cursor, s.offset, s.focused
		}
		a.frameTaken = true
		f.hits.Add(1)
		return true
	}
	return false
}

// offerShared stores the frame the console just composed under k, the
// key it had before composing.
func (a *App) offerShared(k frameKey) {
	after, ok := a.listStates()
	if !ok {
		return
	}
	e := sharedFrame{
		key: k, hist: cloneHistory(a.hist), frame: a.frame, lay: a.lay,
		geoms:      append([]graphGeom(nil), a.geoms...),
		composedAt: a.composedAt, staleAt: a.staleAt, shownUpdated: a.shownUpdated, after: after,
		flashUntil: a.Flash.Until, cols: append([]kernCol(nil), a.Kernels.cols...),
	}
	f := a.opts.Frames
	f.misses.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ents[f.next] = e
	f.next = (f.next + 1) % framesLen
}

// composeShared is View's composition: taken from the store when another
// console in the same state composed it, else composed and offered.
func (a *App) composeShared() {
	k, ok := a.shareKey()
	if ok && a.takeShared(k) {
		return
	}
	a.composeOwn()
	if ok {
		a.offerShared(k)
	}
}

// composeOwn composes the console's frame itself.
func (a *App) composeOwn() {
	a.composedAt = a.Now()
	a.frame = a.compose()
	if a.St.ASCII {
		a.frame = kit.ASCIIOnly(a.frame)
	}
	a.frameTaken = false
}

// noteShared takes the console off the shared path for good when msg is
// input from the operator: what keys and the mouse change is more than
// the key says, and a viewer that used them is no longer idle.
func (a *App) noteShared(msg tea.Msg) {
	switch msg.(type) {
	case tea.KeyPressMsg, tea.KeyReleaseMsg, tea.MouseMsg, tea.PasteMsg, tea.PasteStartMsg, tea.PasteEndMsg, themeLoadedMsg:
		a.shareOff = true
		if a.frameTaken && a.FrameOK {
			// What the panes note while drawing (the kernels' columns,
			// which a click on their header reads) is the console's own
			// again before the input is handled: the same frame, drawn.
			a.composeOwn()
		}
	}
}

// cloneHistory copies h.
func cloneHistory(h history) history {
	c := make(history, len(h))
	for k, dh := range h {
		d := *dh
		c[k] = &d
	}
	return c
}

// histSame says whether two histories hold the same rings, sample by
// sample (bit for bit: the gaps are NaN).
func histSame(a, b history) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y := b[k]
		if y == nil || x.sec != y.sec || !ringSame(&x.alloc, &y.alloc) || !ringSame(&x.Util, &y.Util) || !ringSame(&x.Mem, &y.Mem) {
			return false
		}
	}
	return true
}

func ringSame(x, y *ring) bool {
	if x.head != y.head || x.N != y.N || x.still != y.still {
		return false
	}
	// Bit for bit (NaN is a gap, and equals itself), as one comparison of
	// memory: every take of a shared frame compares the taker's rings
	// with the composer's, and a loop over the samples was 3 % of the
	// server's CPU at 50 viewers of the demo.
	return *ringBits(&x.v) == *ringBits(&y.v)
}

// ringBits is a ring's samples as the bytes of their bits.
func ringBits(v *[histLen]float32) *[histLen * 4]byte {
	return (*[histLen * 4]byte)(unsafe.Pointer(v))
}
