package console

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	record "github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// The console in the past: `:at TIME` shows the whole console as the
// history recorded it, `[` and `]` step change by change, `:live` comes
// back. While in the past, live snapshots are kept, not shown; nothing can
// be edited.

// Past actions, beyond the key map's own (they exist only with a history).
const (
	actPastPrev = ActDemoRestart + 1 + iota
	actPastNext
)

// pastBindings are the keys of a console that has a history.
func pastBindings() []kit.Binding {
	b := func(act kit.Action, keys []string, helpKey, desc string) kit.Binding {
		return kit.NewBinding(act, kit.GrpView, ScMain, 0, keys, helpKey, desc)
	}
	return []kit.Binding{
		b(actPastPrev, []string{"["}, "[", "past: previous change (:at TIME, :live)"),
		b(actPastNext, []string{"]"}, "]", "past: next change"),
	}
}

// pastState is where the console is in the record.
type pastState struct {
	on bool
	// snap is the past snapshot shown; live the newest live one, kept.
	snap, live *model.Snapshot
	// liveHist is the live history graphs, put aside while in the past.
	liveHist history
	// note says what the record lacks at the shown moment ("" when exact).
	note string
	// outside is the past moment the snapshots fed from outside are of
	// (the fleet's node opened while the fleet shows the past; ShowPast);
	// zero when they are live.
	outside time.Time
}

// pastMsg is a past snapshot read off the Update loop.
type pastMsg struct {
	id   int // the read's (recordReads)
	snap *model.Snapshot
	note string
	// short is the note where it does not fit the footer: the stretch
	// the record lacks, by the clock, so the operator can ask after it.
	short string
	err   error
}

// pastCommand runs :at and :live.
func (a *App) pastCommand(f []string) tea.Cmd {
	if f[0] == "live" {
		a.goLive()
		return nil
	}
	if a.opts.History == "" {
		a.Flashf(kit.LvlWarn, "no history here: "+a.noRecordWhy(false))
		a.Flash.Short = "no history here: " + a.noRecordWhy(true)
		return nil
	}
	if len(f) < 2 {
		a.Flashf(kit.LvlWarn, "usage: :at TIME (14:02, 14:02:17, -2h, 2026-11-27 14:02, RFC 3339); :live to come back")
		a.Flash.Short = AtShort("")
		return nil
	}
	now := a.Now()
	t, err := record.ParseWhen(strings.Join(f[1:], " "), now)
	if err != nil {
		a.Flashf(kit.LvlWarn, err.Error())
		a.Flash.Short = AtShort(strings.Join(f[1:], " "))
		return nil
	}
	return a.loadPast(func(_ context.Context, rd *record.Reader) (time.Time, bool) {
		// A moment to come is said to be one, not read as a recorder
		// that stopped writing.
		rd.Now = func() time.Time { return now }
		return t, true
	})
}

// loadPast reads, in a Cmd, the record at the time pick chooses; it
// replaces any read of the record in flight.
func (a *App) loadPast(pick func(context.Context, *record.Reader) (time.Time, bool)) tea.Cmd {
	dir, live := a.opts.History, a.Now()
	return a.reads.run(readPast, func(ctx context.Context, id int) tea.Msg {
		rd, err := record.OpenReader(dir)
		if err != nil {
			return pastMsg{id: id, err: err}
		}
		// A replaced read stops inside a segment's decompression too, not
		// only between segments.
		rd.SetContext(ctx)
		t, ok := pick(ctx, rd)
		if err := ctx.Err(); err != nil {
			return pastMsg{id: id, err: err}
		}
		if !ok {
			return pastMsg{id: id, err: fmt.Errorf("no recorded change that way")}
		}
		res, err := rd.AtContext(ctx, t)
		if err != nil {
			return pastMsg{id: id, err: err}
		}
		var lacks []string
		short := ""
		for _, m := range res.Missing {
			if !res.Exact {
				lacks = append(lacks, m.Why)
				if short == "" && m.To.After(m.From) {
					short = "the record lacks " + shortStretch(m.From, m.To, live) + "; shown as last recorded"
				}
			}
		}
		return pastMsg{id: id, snap: res.Snap, note: strings.Join(lacks, "; "), short: short}
	}, func(id int) tea.Msg { return pastMsg{id: id, err: context.Canceled} })
}

// pastUpdate handles what belongs to the past: its messages, and live
// snapshots while in it.
func (a *App) pastUpdate(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case pastMsg:
		if !a.reads.answered(msg.id) {
			return nil, true // replaced by a newer read
		}
		if msg.err != nil {
			a.Flashf(kit.LvlWarn, msg.err.Error())
			if oe := (*record.OutsideError)(nil); errors.As(msg.err, &oe) {
				a.Flash.Short = outsideShort(oe, a.Now())
			}
			return nil, true
		}
		if !a.past.on {
			a.past.on = true
			a.pastKeys()
			a.past.live = a.Snap
			a.past.liveHist = a.hist
			if a.ed() != nil {
				a.Flashf(kit.LvlInfo, "the partition draft stays open; it is edited against the live node (:live)")
			}
		}
		a.hist = history{}
		a.past.snap, a.past.note = msg.snap, msg.note
		a.adopt(msg.snap)
		if msg.note != "" {
			a.Flashf(kit.LvlWarn, "the record lacks this moment: "+msg.note)
			a.Flash.Short = msg.short
		}
		return nil, true
	case SnapshotMsg:
		if !a.past.on {
			return nil, false
		}
		a.observeLive(a.past.live, msg.Snap)
		a.past.live = msg.Snap
		a.Invalidate()
		return a.listen(), true
	}
	return nil, false
}

// pastKey handles the past's keys and keeps editing out of the past.
func (a *App) pastKey(act kit.Action, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if act == kit.ActNone && a.past.on {
		// A key the past disabled (pastKeys) still says why it does
		// nothing here.
		act = a.Keys.Disabled(ScMain, msg)
	}
	switch act {
	case actPastPrev, actPastNext:
		if a.reads.inFlight(readPast) {
			return nil, true
		}
		from := a.Now()
		if a.past.on && a.past.snap != nil {
			from = a.past.snap.Time
		} else if a.Snap != nil {
			from = a.Snap.Time
		}
		dir := -1
		if act == actPastNext {
			if !a.past.on {
				a.Flashf(kit.LvlInfo, "this is the live node: [ steps back, :at TIME jumps")
				return nil, true
			}
			dir = 1
		}
		// By the second the header shows: a change a few milliseconds
		// later left PAST 14:02:17 where it was.
		return a.loadPast(func(ctx context.Context, rd *record.Reader) (time.Time, bool) {
			return rd.StepShownContext(ctx, from, dir, time.Second)
		}), true
	case ActEditPartition:
		if a.past.on {
			a.Flashf(kit.LvlWarn, "no editing in the past: :live comes back to the node as it is")
			return nil, true
		}
	case ActDemoRestart:
		if a.past.on {
			// It acts on the node as it is, which the screen does not show.
			a.Flashf(kit.LvlWarn, "no restarting in the past: :live comes back to the node as it is")
			return nil, true
		}
	}
	return nil, false
}

// pastKeys disables, in the past, the keys that act on the node as it
// is, which the screen does not show (e edit partition, the demo's R
// restart), and enables them again live: the footer and the help, made
// from the key map, offer them only where they do something.
func (a *App) pastKeys() {
	bl := slices.Clone(a.Keys.BindingList)
	for i := range bl {
		if bl[i].Act == ActEditPartition || bl[i].Act == ActDemoRestart {
			bl[i].Key.SetEnabled(!a.past.on)
		}
	}
	a.Keys.BindingList = bl
	a.shortHelp = "" // the footer kept for its width
	a.Invalidate()
}

// goLive leaves the past: the newest live snapshot and the live history
// graphs come back.
func (a *App) goLive() {
	if !a.past.on && !a.past.outside.IsZero() {
		// The moment is chosen by whoever feeds this console: :live here
		// cannot change it.
		a.Flashf(kit.LvlInfo, "q "+a.opts.QuitIs+", then :live")
		return
	}
	if !a.past.on {
		a.Flashf(kit.LvlInfo, "already live")
		return
	}
	a.past.on = false
	a.pastKeys()
	a.At = time.Time{}
	a.hist = a.past.liveHist
	if sm := a.opts.Samples; sm != nil {
		// The samples every console here shares, which this one went on
		// recording in the past (observeLive): the graphs of the viewers
		// in one state are one.
		a.hist = sm.clone()
	}
	a.past.liveHist = nil
	live := a.past.live
	a.past.snap, a.past.live, a.past.note = nil, nil, ""
	if live != nil {
		a.adopt(live)
	}
	a.Flashf(kit.LvlInfo, "live")
}

// ShowPast says that the snapshots fed to the console are of the moment
// at, not now (the fleet's node, opened while the fleet shows the past):
// the header says PAST as :at's does. The zero time says they are live.
func (a *App) ShowPast(at time.Time) {
	if !a.past.outside.Equal(at) {
		a.past.outside = at
		switch {
		case !at.IsZero():
			a.At = at // ages count to it
		case !a.past.on:
			a.At = time.Time{}
		}
		a.Invalidate()
	}
}

// pastBanner is the header's first piece while in the past.
func (a *App) pastBanner() []headerPiece {
	at, liveAt := a.past.outside, a.Now()
	switch {
	case a.past.on && a.past.snap != nil:
		at = a.past.snap.Time
		if a.past.live != nil {
			liveAt = a.past.live.Time
		}
	case at.IsZero():
		return nil
	}
	clock, liveClock := pastClock(at, liveAt), liveAt.Local().Format("15:04:05")
	spans := []kit.Span{{Lvl: kit.LvlCrit, Text: " PAST " + clock + ", live is " + liveClock + " "}}
	// At 80 columns the banner shortens to the moment, and the rest goes
	// to the second line: the node's name and health stay whole.
	short := []kit.Span{{Lvl: kit.LvlCrit, Text: " PAST " + clock + " "}}
	spill := []kit.Span{{Lvl: kit.LvlCrit, Text: "live is " + liveClock}}
	if a.past.note != "" {
		spans = append(spans, kit.Span{Lvl: kit.LvlWarn, Text: " record lacks this moment"})
		spill = append(spill, kit.Span{Lvl: kit.LvlWarn, Text: "; the record lacks this moment"})
	}
	return []headerPiece{{spans: spans, short: short, spill: spill}}
}

// pastClock is the past moment: its time of day, with the date when it is
// not the live day.
func pastClock(t, live time.Time) string {
	t, live = t.Local(), live.Local()
	if t.YearDay() == live.YearDay() && t.Year() == live.Year() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04:05")
}

// pastStretch is from to to by the clock: from with its date where it is
// not the live day, to with its date where it is not from's. Dated by
// the stretch alone, a record of two days ago read "08:00:00 to
// 09:00:00", as if it were today's, and one ending today read "2026-11-21
// 23:00:00 to 00:00:00".
func pastStretch(from, to, live time.Time) string {
	return pastClock(from, live) + " to " + pastClock(to, from)
}

// outsideShort is a refused :at's words where the whole refusal does not
// fit the footer: the span the record covers, which the operator needs
// to pick a time it has, by the clock (dated against live, the console's
// now). At 80 columns the whole refusal was cut before the span ("… is
// before the record begins; the recor…").
func outsideShort(e *record.OutsideError, live time.Time) string {
	span := shortStretch(e.From, e.To, live)
	switch {
	case !e.Now.IsZero():
		return "still to come; the record: " + span
	case e.At.Before(e.From):
		return "before the record: " + span
	case e.Damage != "":
		return "after the last intact change: " + span
	}
	return "after the record: " + span
}

// shortStretch is pastStretch for the footer's short words, a date
// without its year where that is the year before it: at 80 columns the
// flash has 63 cells beside help and quit, and a stretch across midnight
// is two dates ("2026-11-21 23:00:00 to 2026-11-22 00:30:00" cut the
// second one short).
func shortStretch(from, to, live time.Time) string {
	return shortClock(from, live) + " to " + shortClock(to, from)
}

func shortClock(t, ref time.Time) string {
	c := pastClock(t, ref)
	if len(c) > len("15:04:05") && t.Local().Year() == ref.Local().Year() {
		return t.Local().Format("01-02 15:04:05")
	}
	return c
}

// graphEnd is what the history graphs' time axis says under its newest
// column: the moment shown while the console is in the past (its clock,
// as the PAST banner gives it), "" (now) while it is live.
func (a *App) graphEnd() string {
	switch {
	case a.past.on && a.past.snap != nil:
		live := a.Now()
		if a.past.live != nil {
			live = a.past.live.Time
		}
		return pastClock(a.past.snap.Time, live)
	case !a.past.outside.IsZero():
		return pastClock(a.past.outside, a.Now())
	}
	return ""
}

// atShort is what :at says where its forms do not fit beside the keys:
// at 80 columns the list was cut after its first, RFC 3339 ("a local~").
// typed is what followed :at ("" for nothing).
func AtShort(typed string) string {
	lead := "usage: :at TIME"
	if typed != "" {
		lead = fmt.Sprintf(":at %q: not a time", typed)
	}
	return lead + " (e.g. 14:02 or -2h; more in ?)"
}
