package console

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/replay"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// Options configure one console program. The zero value is a usable
// read-write console with an auto-detected theme.
type Options struct {
	// ReadOnly builds the viewer key map: no action that changes the node
	// exists, and a lock mark shows in the header.
	ReadOnly bool
	// Theme is the theme to use. Nil picks one: mono when the program's
	// environment sets NO_COLOR, else dark or light by Background or by
	// asking the terminal for its background colour.
	Theme *themes.Theme
	// Background overrides light/dark detection when Theme is nil: "dark"
	// or "light"; "" asks the terminal (unreliable over SSH and tmux).
	Background string
	// QuitIs, when set, is what q does in a console opened inside another
	// (the fleet's node: "back to the fleet"); its footer and help say it
	// rather than "quit". The caller handles the key.
	QuitIs string
	// ASCII draws with 7-bit characters only: bars of '#', '=' and '.', '!'
	// beyond capacity.
	ASCII bool
	// Now is the clock for ages and "updated 3s ago"; time.Now when nil.
	// Tests fix it.
	Now func() time.Time
	// NodeName is shown until a snapshot names the node.
	NodeName string
	// Thresholds colour telemetry; DefaultThresholds when nil.
	Thresholds *kit.Thresholds
	// Actor is who sits at this console (user, origin, role); the
	// partition desk journals writes under it and refuses a viewer's.
	Actor agentconfig.Actor
	// Desk edits the node's partition; nil when there is no agent config
	// to edit (then the console has no editor).
	Desk *partition.Desk
	// LoadTheme loads what `:theme ARG` names, off the Update loop. Nil
	// means themes.Load: a name, or any theme file the local user may
	// read. A console served over SSH gets a loader that takes names only
	// (themes.LoadNamed), so nothing a viewer types reads a file.
	LoadTheme func(arg string) (*themes.Theme, error)
	// DemoRestart restarts the demo's simulated agents whose partition in
	// agent.toml changed (key R) and says what it did; nil outside the
	// demo, where the key does not exist.
	DemoRestart func() (string, error)
	// History is the history directory the console records into and
	// reads the past from (:at); "" when there is none.
	History string
	// NoRecordWhy is what :at, :live, :span and the help say where
	// History is "" ("" for the local words: start fgtop with --history
	// DIR): a node opened from the fleet has its record on the node.
	NoRecordWhy string
	// HistoryOffByEnv: History is "" because FGTOP_HISTORY=off is set
	// (no --history flag), which the local words then name.
	HistoryOffByEnv bool
	// Unrecorded, when set, is the header's mark that the node is not
	// recorded although the operator would expect it to be (its files
	// are the demo's): a line on stderr is hidden by the console.
	Unrecorded string
	// NoJournalWhy is what :journal says where Desk is nil ("" for the
	// local words: start fgtop with --config FILE): a node opened from the
	// fleet has its agent.toml, and the journal beside it, on the node.
	NoJournalWhy string
	// Deriver derives the live snapshots; consoles that are fed the same
	// snapshots (serve's sessions) share one, so each snapshot is derived
	// once for all of them. Nil gives the console one of its own.
	Deriver *render.Deriver
	// Records is the process's cache of replayed records, shared by the
	// partition editors of every console it runs (nil: each editor reads
	// its own).
	Records *replay.RecordCache
	// ClockOnSecond puts the console's clock on the wall clock's whole
	// second (plus tickGrace) rather than a TickInterval after its last
	// tick: serve's sessions, opened at any phase, then move their ages
	// at one instant and draw the same frames (screen.Transitions shares
	// them). The local console leaves it off.
	ClockOnSecond bool
	// Samples are the history graphs' samples of the live snapshots,
	// shared by the consoles fed the same ones (serve's sessions): a
	// console starts its graphs from them, so one opened late draws what
	// the others draw. Nil: the graphs start with the console.
	Samples *Samples
	// Frames lets the read-only consoles in one state compose each frame
	// once (sharedframes.go); nil: each composes its own.
	Frames *Frames
}

// ShareDerivations returns o with a Deriver, unless it has one: every
// console made from the options it returns derives each snapshot once
// with the others (serve's sessions, fed the same snapshots).
func (o Options) ShareDerivations() Options {
	if o.Deriver == nil {
		o.Deriver = render.NewDeriver()
	}
	if o.Samples == nil {
		o.Samples = NewSamples()
	}
	if o.Frames == nil {
		o.Frames = NewFrames()
	}
	return o
}

// FrameRate is how many snapshots a second the console adopts at most
// (frameInterval): a burst of file writes is derived and drawn once per
// 50 ms, and the first write after a quiet spell at once. It is no longer
// a renderer's rate: the programs are drawn by package screen when what
// they show changed (at most once per screen.MinInterval), not on a
// ticker. Bubble Tea's renderer, which drew on a ticker at this rate,
// cost 0.32 % of a core at 20 fps and 0.80-0.90 % at 60 fps at 160x48 on
// 8 mock GPUs with nothing changing; at 20 a file write reached the
// screen in about 72 ms at p99 (target 100 ms; bench/latency.sh).
const FrameRate = 20

// frameInterval is how often at most a new snapshot is adopted: adopting
// more often than the renderer draws is work nobody sees.
const frameInterval = time.Second / FrameRate

// TickInterval refreshes ages and expires flash messages.
const TickInterval = time.Second

// tickGrace is how long past TickInterval the console's clock waits for
// a snapshot before it fires. Every snapshot adopted at least half a
// TickInterval after the last tick does the tick's work (ages, flash
// expiry, the desk's poll) and moves the clock on, so at rest the
// once-a-second inventory poll is the console's only wake-up: the clock
// fires only when no snapshot came, and a text that turned over is then
// drawn at most TickInterval+tickGrace late (ages are whole seconds).
const tickGrace = 50 * time.Millisecond

// PromptMode is what the footer's prompt is for.
type PromptMode uint8

// The prompts: none, the filter (/), a command (:).
const (
	PromptNone PromptMode = iota
	PromptFilter
	PromptCommand
)

// Messages.
type (
	SnapshotMsg struct{ Snap *model.Snapshot }
	// themeLoadedMsg is the result of `:theme ARG`, loaded in a Cmd.
	themeLoadedMsg struct {
		t   *themes.Theme
		Err error
		// name is what was typed after :theme.
		name string
	}
	closedMsg struct{}
	frameMsg  struct{}
	// clockMsg is the console's clock firing (consoleClock).
	clockMsg struct{}
)

// App is the root model. It keeps the last adopted snapshot, what was
// derived from it, the panes (each with its own cursor and view state),
// the focus and the history; no other domain state.
type App struct {
	*common
	opts  Options
	ch    <-chan *model.Snapshot
	theme themeChoice

	pending    *model.Snapshot
	frameArmed bool
	// filterFlash is the flash a kept filter last said (filterKept).
	filterFlash string
	// adoptedAt is when the last snapshot was adopted (frame pacing).
	adoptedAt time.Time
	// composedAt is when the cached frame was composed; staleAt is the
	// earliest instant one of its texts changes by time alone (zero:
	// none), shownUpdated the "updated ... ago" it shows: until either
	// moves, a tick or a snapshot of the same content leaves the frame
	// as it is (checkStale).
	composedAt   time.Time
	staleAt      time.Time
	shownUpdated kit.Span
	// composing is set while compose runs (shownUpdated is the frame's).
	composing bool
	// hdrPieces and hdrSpans are headerPieces' scratch: the last
	// header's pieces, made again into the same memory.
	hdrPieces []headerPiece
	hdrSpans  []kit.Span
	// geoms are the live history graphs the frame draws from the rings
	// (history.retime tells from them whether a repeated sample shows).
	geoms []graphGeom
	// dFor is what the current derivation was made with.
	dFor derivedFor
	// lastTick is when the tick's work last ran; clock fires when no
	// snapshot did it for TickInterval+tickGrace.
	lastTick time.Time
	clock    *consoleClock
	Closed   bool
	// deriver derives the live snapshots (Options.Deriver); pastCache
	// those of the record (:at), which no other console shares.
	deriver    *render.Deriver
	pastCache  *render.DeriveCache
	hist       history
	past       pastState
	verdict    verdictState // ShowVerdict
	graph      graphSpan
	seenIssues map[string]bool
	// fitSeq numbers the :fit requests: only the last one's answer shows.
	fitSeq int
	// jourWrite is the desk's latest write when last polled: a new one
	// reloads an open :journal.
	jourWrite partition.Hold
	// reads is the one read of the history record this console may have
	// running (recordread.go).
	reads recordReads
	// startPicked: the devices cursor's start is settled (a node with
	// something held was seen, or the operator pressed a key or used the
	// mouse), so startOnNeediest no longer moves it.
	startPicked bool
	// shareOff: the console had input and composes its own frames
	// (Options.Frames).
	shareOff bool
	// frameTaken: the frame is another console's (Options.Frames).
	frameTaken bool

	// The main screen's panes, in focus order (indexed by pane), and the
	// focused one; the typed pointers are for what crosses panes (the
	// kernels follow the devices cursor, enter on an issue selects its
	// kernel).
	panes   [numPanes]paneModel
	focus   pane
	devices *devicesPane
	Kernels *kernelsPane
	Agents  *agentsPane
	Issues  *issuesPane

	// layers are the components over the main screen, bottom first: the
	// top one has the keys (layers.go).
	layers []kit.Layer

	// What the desk says about who holds the draft and the last write,
	// refreshed when its version changes.
	deskHold  []kit.Span
	deskWrite []kit.Span
	// desk is the desk work this console has under way off the UI loop
	// (editor_cmds.go): every call into the desk that reads or writes a
	// file runs in a tea.Cmd and comes back as a message.
	Desk *editor.DeskWork

	// Cached between frames: the composed frame, the layout it used (for
	// mouse hits) and the footer help.
	frame     string
	lay       layout
	shortHelp string
	helpW     int
}

// themeChoice remembers how the theme was chosen, so detection results
// only replace a theme nobody chose explicitly.
type themeChoice struct {
	explicit bool
	noColor  bool
	dark     bool
}

// New returns the console's root model. It renders the snapshots received
// on snapshots (nil: none ever come) and never blocks their sender for
// long: the channel is drained to the newest snapshot, and at most one is
// adopted per frame.
//
// The caller owns the console: call Close once its program has ended.
func New(snapshots <-chan *model.Snapshot, opts Options) *App {
	return newApp(snapshots, opts)
}

func newApp(snapshots <-chan *model.Snapshot, opts Options) *App {
	a := &App{
		common: &common{Common: &kit.Common{Now: opts.Now, Th: kit.DefaultThresholds(), Actor: opts.Actor}, memo: newViewMemo()},
		opts:   opts, ch: snapshots,
		hist: history{}, seenIssues: map[string]bool{},
		Desk: &editor.DeskWork{}, deriver: opts.Deriver,
		clock: newConsoleClock(opts.ClockOnSecond),
	}
	if a.deriver == nil {
		a.deriver = render.NewDeriver()
	}
	a.newPanes()
	if a.Now == nil {
		a.Now = time.Now
	}
	if opts.Thresholds != nil {
		a.Th = *opts.Thresholds
	}
	role := kit.RoleOperator
	if opts.ReadOnly {
		role = kit.RoleViewer
	}
	a.Keys = NewKeyMap(role)
	if opts.DemoRestart != nil {
		a.Keys = withDemoRestart(a.Keys)
	}
	if opts.QuitIs != "" {
		a.Keys = withQuitAs(a.Keys, opts.QuitIs)
	}
	if opts.ASCII {
		a.Keys = a.Keys.WordsOf(kit.ASCIIGlyphs())
	}
	if opts.History != "" {
		a.Keys.BindingList = append(a.Keys.BindingList, pastBindings()...)
		if role.CanWrite() {
			// The editor's replay line: its keys exist where a record
			// does, and only in an operator's map (S edits the draft).
			a.Keys.BindingList = append(a.Keys.BindingList, editor.ReplayBindings()...)
		}
	}
	t := opts.Theme
	a.theme.dark = opts.Background != "light"
	if t != nil {
		a.theme.explicit = true
	} else {
		t = themes.Auto(a.theme.dark)
	}
	a.setTheme(t)
	return a
}

// setTheme rebuilds the program's styles. A theme that fails to parse
// keeps the current styles (built-in themes always parse).
func (a *App) setTheme(t *themes.Theme) error {
	st, err := kit.NewStyles(t, a.opts.ASCII)
	if err != nil {
		return err
	}
	a.St = st
	a.shortHelp = ""
	a.Invalidate()
	return nil
}

// Init starts listening for snapshots, the clock tick and, when the theme
// is to be detected, asks the terminal for its background colour.
func (a *App) Init() tea.Cmd {
	a.pollDesk()
	a.lastTick = a.Now()
	cmds := []tea.Cmd{a.listen(), a.clock.wait(), a.takeLater(nil)}
	if !a.theme.explicit && a.opts.Background == "" {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

// listen waits for the next snapshot, then drains whatever else is queued
// so only the newest is delivered.
func (a *App) listen() tea.Cmd {
	return ListenLatest(a.ch, func(s *model.Snapshot) tea.Msg { return SnapshotMsg{s} }, closedMsg{})
}

// ListenLatest waits for the next value on ch and drains whatever else is
// queued, so only the newest is delivered (wrapped); closed is delivered
// when ch closes. A nil ch never delivers.
func ListenLatest[T any](ch <-chan T, wrap func(T) tea.Msg, closed tea.Msg) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		v, ok := <-ch
		if !ok {
			return closed
		}
		for {
			select {
			case next, ok := <-ch:
				if !ok {
					return wrap(v)
				}
				v = next
			default:
				return wrap(v)
			}
		}
	}
}

// derivedFor is what a derivation depends on besides the snapshot: the
// styles (glyphs, kernel looks) and thresholds.
type derivedFor struct {
	st *kit.Styles
	th kit.Thresholds
}

// consoleClock is the console's one timer: it fires TickInterval (and
// tickGrace) after the tick's work last ran, and each snapshot that does
// that work moves it on instead of a second timer waking the process at
// another phase of the second.
type consoleClock struct {
	mu   sync.Mutex
	t    *time.Timer
	gen  uint64        // the armed timer's; an older one's ring is dropped
	ring chan struct{} // one ring at most, taken by wait
	done chan struct{}
	once sync.Once
	// onSecond: the clock fires at a whole second (Options.ClockOnSecond).
	onSecond bool
}

func newConsoleClock(onSecond bool) *consoleClock {
	c := &consoleClock{onSecond: onSecond, ring: make(chan struct{}, 1), done: make(chan struct{})}
	c.restart()
	return c
}

// next is how long after now the clock fires: TickInterval+tickGrace, or
// tickGrace past the first whole second after now. The timer is the
// real clock's, so now is too (Options.Now is the shown ages').
func (c *consoleClock) next(now time.Time) time.Duration {
	if !c.onSecond {
		return TickInterval + tickGrace
	}
	return now.Truncate(TickInterval).Add(TickInterval + tickGrace).Sub(now)
}

// wait is the command that waits for the clock (one at a time: the
// clockMsg it delivers starts the next).
func (c *consoleClock) wait() tea.Cmd {
	return func() tea.Msg {
		select {
		case <-c.ring:
			return clockMsg{}
		case <-c.done:
			return nil
		}
	}
}

// due says whether a snapshot adopted at now does the tick's work, last
// done at last: half a TickInterval after it, or, on the whole second,
// once a whole second passed since (the first snapshot of each second
// does it, and the clock, at the next second's grace, never fires while
// the engine's poll on the whole second brings one).
func (c *consoleClock) due(last, now time.Time) bool {
	if c.onSecond {
		return now.Truncate(TickInterval).After(last)
	}
	return now.Sub(last) >= TickInterval/2
}

// restart makes the clock fire TickInterval+tickGrace from now (or at
// the next whole second's grace). It arms a new timer rather than Reset
// the pending one: the runtime keeps a timer Reset to a later instant
// under its old instant until that comes, and wakes a thread (and its
// monitor, twice) to find nothing due, 50 ms after every snapshot at rest.
// A stopped timer's entry is dropped when the next one is added
// (bench/idle-vs-nvtop.sh; TestClockRestart).
func (c *consoleClock) restart() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t != nil {
		c.t.Stop()
	}
	c.gen++
	gen := c.gen
	select {
	case <-c.ring: // the old timer's, not yet taken
	default:
	}
	c.t = time.AfterFunc(c.next(time.Now()), func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.gen == gen {
			select {
			case c.ring <- struct{}{}:
			default:
			}
		}
	})
}

// stop ends the clock and its waiting command.
func (c *consoleClock) stop() {
	c.once.Do(func() {
		c.mu.Lock()
		c.t.Stop()
		c.mu.Unlock()
		close(c.done)
	})
}

// tickWork is the clock's once-a-second work, done by the clock or by a
// snapshot adopted at least half a TickInterval after the last: a flash
// runs out, the frame is dropped where a text of it turned over, the
// layers hear the tick, the desk is asked who holds the draft.
func (a *App) tickWork(now time.Time) {
	a.lastTick = now
	a.clock.restart()
	if a.ExpireFlash() {
		a.Invalidate()
	}
	a.checkStale(now)
	a.broadcast(kit.TickMsg{}) // the editor checks its draft against the snapshot
	a.pollDesk()
}

// checkStale drops the frame when, at now, a fresh one would read
// otherwise: one of its ages or expiries came due (staleAt), or the
// "updated ... ago" for the current snapshot is not the one it shows.
func (a *App) checkStale(now time.Time) {
	if !a.FrameOK {
		return
	}
	if !a.staleAt.IsZero() && !now.Before(a.staleAt) {
		a.Invalidate()
		return
	}
	if u, _ := updatedSpan(a.Snap, now); u != a.shownUpdated {
		a.Invalidate()
	}
}

// frame ends the current frame after d.
func frame(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return frameMsg{} })
}

// adoptNow adopts s and starts a frame.
func (a *App) adoptNow(s *model.Snapshot) {
	now := a.Now()
	a.adoptedAt = now
	a.adopt(s)
	if a.clock.due(a.lastTick, now) {
		a.tickWork(now)
	} else {
		a.checkStale(now)
	}
}

// retime adopts s when it is the current snapshot's content at a newer
// time (the engine's same content generation: a poll that read what the
// last one read). Nothing is derived again and no issue is new: the
// history repeats its last samples, and the frame is dropped only where
// what it shows moves (a graph's columns, "updated ... ago": checkStale).
func (a *App) retime(s *model.Snapshot) bool {
	old := a.Snap
	if old == nil || s.Gen == 0 || s.Gen != old.Gen || a.past.on || a.d == nil || a.dFor != (derivedFor{a.St, a.Th}) {
		return false // (a theme changed since: derived again with its glyphs)
	}
	a.Snap = s
	if a.opts.Samples != nil {
		a.opts.Samples.record(s, nil)
	}
	if a.hist.retime(s.Time.Unix(), a.geoms) {
		a.Invalidate()
	}
	return true
}

// adopt makes a snapshot current: derive what the views need once, record
// history, flash issues that were not there before.
func (a *App) adopt(s *model.Snapshot) {
	if a.retime(s) {
		return
	}
	first := a.Snap == nil
	a.Snap = s
	a.At = time.Time{}
	if a.past.on || !a.past.outside.IsZero() {
		// The past, by :at or by whoever feeds this console (a node
		// opened from the fleet in the past).
		a.At = s.Time
	}
	o := render.DeriveOptions{Th: a.Th, G: a.St.G, Looks: a.St.LookDims()}
	if a.past.on {
		if a.pastCache == nil {
			a.pastCache = render.NewDeriveCache()
		}
		a.d = render.Derive(s, o, a.pastCache)
	} else {
		a.pastCache = nil
		a.d = a.deriver.Derive(s, o)
	}
	a.dFor = derivedFor{a.St, a.Th}
	frac := fracOf(a.d)
	switch sm := a.opts.Samples; {
	case sm == nil || a.past.on:
		a.hist.observe(s, frac)
	case first:
		// The graphs as the consoles here before this one draw them.
		sm.record(s, frac)
		a.hist = sm.clone()
	default:
		sm.record(s, frac)
		a.hist.observe(s, frac)
	}
	a.followFlash()
	a.flashNewIssues(first)
	a.clampCursors()
	if !a.startPicked && !a.past.on {
		a.startOnNeediest()
	}
	a.Kernels.refresh()
	a.broadcast(kit.AdoptedMsg{})
	a.Invalidate()
}

// observeLive records a live snapshot that comes while the console shows
// the past, in the live history it goes back to (and the samples it
// shares): the graphs are then the node's whole, where coming back drew
// the seconds in the past as the last reading before them (the tour).
// prev is the live snapshot before s: one of the same content (the
// engine's generation) repeats the last samples, as retime does, without
// deriving s. With shared samples, only they are kept: goLive takes them.
func (a *App) observeLive(prev, s *model.Snapshot) {
	sm, h := a.opts.Samples, a.past.liveHist
	if sm != nil {
		h = nil
	}
	if sm == nil && h == nil {
		return
	}
	if prev != nil && s.Gen != 0 && s.Gen == prev.Gen {
		if sm != nil {
			sm.record(s, nil)
		} else {
			h.retime(s.Time.Unix(), nil)
		}
		return
	}
	frac := fracOf(a.deriver.Derive(s, render.DeriveOptions{Th: a.Th, G: a.St.G, Looks: a.St.LookDims()}))
	if sm != nil {
		sm.record(s, frac)
	} else {
		h.observe(s, frac)
	}
}

// fracOf is the history samples of d's devices.
func fracOf(d *render.Derived) func(dv *model.Device) sample {
	return func(dv *model.Device) sample {
		alloc := float32(0)
		if r, ok := d.DevIndex[dv.Key()]; ok {
			row := &d.Devs[r]
			total := 0.0
			for _, v := range row.KernAmts {
				total += v
			}
			switch {
			case row.CapUnknown:
				// No share of an unknown capacity: the graph shows a gap.
				alloc = float32(nan())
			case row.CapF > 0:
				// Not clamped: the history graph says 110 % where a
				// device is over capacity (the plots clamp).
				alloc = float32(total / row.CapF)
			case total > 0:
				alloc = 1
			}
		}
		util, mem := float32(nan()), float32(nan())
		if t := dv.Telemetry; t != nil {
			if t.UtilGPU.Valid {
				util = float32(t.UtilGPU.V) / 100
			}
			if t.MemUsed.Valid && t.MemTotal.Valid && t.MemTotal.V > 0 {
				mem = float32(min(float64(t.MemUsed.V)/float64(t.MemTotal.V), 1))
			}
		}
		return sample{alloc, util, mem}
	}
}

// View draws the console. The frame is cached between state changes,
// because Bubble Tea asks for a view after every message, also the ones
// that change nothing visible (snapshots waiting for the next frame).
func (a *App) View() tea.View {
	if !a.FrameOK {
		a.composeShared()
		a.FrameOK = true
	}
	v := tea.NewView(a.frame)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = untrusted.Text("fgtop " + a.NodeName())
	if a.St.ASCII {
		v.WindowTitle = kit.ASCIIOnly(v.WindowTitle)
	}
	return v
}

// NodeName is the node the console shows, for the header and the title.
func (a *App) NodeName() string {
	if a.Snap != nil && a.Snap.Node != "" {
		return a.Snap.Node
	}
	if a.opts.NodeName != "" {
		return a.opts.NodeName
	}
	return "(node)"
}

// compose assembles the whole screen: exactly h rows, none wider than w.
//
// It notes when the frame goes stale: the ages it shows turning over, the
// flash running out; a layer over the main screen or the past (which draw
// clocks of their own) make it stale at once, so each tick draws them
// afresh as before.
func (a *App) compose() string {
	w, h := a.Size()
	a.memo.frame()
	a.BeginStale()
	a.composing, a.shownUpdated, a.geoms = true, kit.Span{}, a.geoms[:0]
	defer func() { a.composing = false }()
	if a.Flash.Text != "" {
		a.ChangesAt(a.Flash.Until)
	}
	if len(a.layers) > 0 || a.past.on {
		a.ChangesAt(a.Now())
	}
	rows := a.Rows(w, h)
	a.memo.clampRows(rows, w) // the safety net; tests check it never cuts
	a.staleAt = a.StaleAt()
	return strings.Join(rows, "\n")
}

// flashNewIssues flashes issues that appeared since the last snapshot. The
// first snapshot's issues are not news: they are in the issues pane and
// counted in the header.
func (a *App) flashNewIssues(first bool) {
	seen := make(map[string]bool, len(a.d.Issues))
	var fresh []*render.IssueRow
	for i := range a.d.Issues {
		r := &a.d.Issues[i]
		seen[r.ID] = true
		if !first && !a.seenIssues[r.ID] {
			fresh = append(fresh, r)
		}
	}
	if len(fresh) > 0 && a.Flash.Text != "" && !a.Flash.News && a.Now().Before(a.Flash.Until) {
		// An answer to the operator (a command's, a key's) stays for its
		// time: on a busy node a new issue came every few hundred ms and
		// wiped "unknown command" before it could be read. The new
		// issues stay news (not seen), to flash once it is gone; the
		// header counts them and the issues pane lists them meanwhile.
		for _, r := range fresh {
			delete(seen, r.ID)
		}
		fresh = nil
	}
	a.seenIssues = seen
	if len(fresh) == 0 {
		return
	}
	worst := fresh[0] // issues are sorted by severity, highest first
	lvl := kit.LvlOK
	switch worst.Is.Severity {
	case model.SevError:
		lvl = kit.LvlCrit
	case model.SevWarning:
		lvl = kit.LvlWarn
	}
	lead := "new issue: "
	if len(fresh) > 1 {
		lead = strconv.Itoa(len(fresh)) + " new issues; "
	}
	a.Flashf(lvl, lead+worst.Text)
	a.Flash.Issue, a.Flash.Lead, a.Flash.Short, a.Flash.News = worst.ID, lead, lead+worst.Short, true
}

// startOnNeediest puts the devices cursor, until the start is settled
// (startPicked), on the device that most needs a look: one held beyond its
// capacity (an error issue on it first), else the one whose capacity is
// most held, else the busiest by utilisation. It started on GPU0, idle
// with empty graphs, wherever the trouble was. A node where nothing is
// held yet (a demo's first seconds, an agent starting) leaves the start
// open until something is.
func (a *App) startOnNeediest() {
	if a.d == nil || len(a.d.Devs) == 0 {
		return
	}
	errDev := map[model.DeviceKey]bool{}
	for _, is := range a.Snap.Issues {
		if is.Severity == model.SevError && is.Device.ID != "" {
			errDev[is.Device] = true
		}
	}
	score := func(r *render.DevRow) (int, float64) {
		held := 0.0
		for _, v := range r.KernAmts {
			held += v
		}
		switch {
		case r.Over && errDev[r.Key]:
			return 3, held
		case r.Over:
			return 2, held
		}
		if r.CapF > 0 && held > 0 {
			return 1, held / r.CapF
		}
		if t := r.Dev.Telemetry; t != nil && t.UtilGPU.Valid {
			return 0, float64(t.UtilGPU.V)
		}
		return 0, -1
	}
	best, bestRank, bestV := 0, -1, 0.0
	for i := range a.d.Devs {
		if rank, v := score(&a.d.Devs[i]); rank > bestRank || rank == bestRank && v > bestV {
			best, bestRank, bestV = i, rank, v
		}
	}
	if bestRank == 0 && bestV <= 0 {
		return // nothing held, nothing busy: wait for something to be
	}
	// Settled once something is held; busy with nothing held yet may
	// still give way to a device that kernels come to hold.
	a.startPicked = bestRank > 0
	if best != a.devices.Cursor {
		a.devices.selectRow(best)
	}
}

// followFlash keeps a new-issue flash on the issue's current figures: an
// over-capacity issue keeps its identity while the amounts move, and the
// flash said the first ones until it expired.
func (a *App) followFlash() {
	f := &a.Flash
	if f.Issue == "" || f.Text == "" {
		return
	}
	for i := range a.d.Issues {
		if r := &a.d.Issues[i]; r.ID == f.Issue {
			if text := f.Lead + r.Text; text != f.Text {
				f.Text, f.Short = text, f.Lead+r.Short
				a.Invalidate()
			}
			return
		}
	}
	// The issue is gone while its flash lasts (the demo's overcommits
	// last seconds): "new issue: GPU3 over capacity" stood beside a GPU3
	// within its capacity and an issues pane without it.
	lead := strings.TrimRight(f.Lead, ":; ") + ", since cleared: "
	if f.Lead != "new issue: " {
		lead = strings.TrimRight(f.Lead, ":; ") + "; the worst since cleared: "
	}
	f.Text = lead + strings.TrimPrefix(f.Text, f.Lead)
	if f.Short != "" {
		f.Short = lead + strings.TrimPrefix(f.Short, f.Lead)
	}
	f.Issue, f.Lead = "", ""
	a.Invalidate()
}

func nan() float64 { return math.NaN() }

// noRecordWhy is what the record's commands say in a console that keeps
// none; short for the help's list.
func (a *App) noRecordWhy(short bool) string {
	switch {
	case a.opts.NoRecordWhy != "":
		return a.opts.NoRecordWhy
	case a.opts.HistoryOffByEnv && short:
		return "FGTOP_HISTORY=off is set"
	case a.opts.HistoryOffByEnv:
		return "FGTOP_HISTORY=off is set: unset it, or start fgtop with --history DIR"
	case short:
		return "start fgtop with --history DIR"
	}
	return "start fgtop with --history DIR (or run fgtop record)"
}
