package fleet

import (
	"context"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	record "github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/ui/console"
	"github.com/fgtop/fgtop/ui/kit"
)

// The fleet in the past: `:at TIME` shows the fleet as its source says it
// was then (Prometheus queried at TIME, or each node's own record), `[`
// and `]` move the moment by Options.Step, `:live` comes back. While in
// the past, live states are kept, not shown.

// DefaultStep is how far `[` and `]` move the shown moment when
// Options.Step is zero: a minute is a few scrapes at Prometheus's usual
// 15 s interval, and a node's record answers any moment.
const DefaultStep = time.Minute

// The fleet's past keys, beyond the shared actions.
const (
	actPastPrev = kit.ActScreen + iota
	actPastNext
)

// pastState is where the fleet console is in time.
type pastState struct {
	on bool
	// want is the moment last asked; at the moment of the fleet shown
	// (fl), nil until the first answer comes.
	want, at time.Time
	fl       *fleet.Fleet
	// live is the newest live state, kept to come back to.
	live *fleet.Fleet
	// seq numbers the reads: only the last one's answer is taken; cancel
	// stops the read in flight when a newer one replaces it.
	seq     int
	cancel  context.CancelFunc
	loading bool
}

// pastMsg is a past fleet read off the Update loop.
type pastMsg struct {
	seq int
	at  time.Time
	fl  *fleet.Fleet
	err error
}

// InPast reports whether the console shows the past, and which moment
// (the one asked while its read is in flight).
func (m *Model) InPast() (bool, time.Time) { return m.past.on, m.past.want }

// pastCommand runs :at and :live.
func (m *Model) pastCommand(f []string) tea.Cmd {
	if f[0] == "live" {
		if !m.past.on {
			m.flashf(kit.LvlInfo, "already live")
			return nil
		}
		m.goLive()
		return nil
	}
	if len(f) < 2 {
		m.flashf(kit.LvlWarn, ":at TIME (14:02, yesterday 14:02, -2h, RFC 3339); :live comes back")
		m.Flash.Short = console.AtShort("")
		return nil
	}
	now := m.Now()
	at, err := record.ParseWhen(strings.Join(f[1:], " "), now)
	if err != nil {
		m.flashf(kit.LvlCrit, ":at "+err.Error())
		m.Flash.Short = console.AtShort(strings.Join(f[1:], " "))
		return nil
	}
	if at.After(now) {
		m.flashf(kit.LvlWarn, ":at "+fleet.AtStamp(at)+" is in the future: the fleet's past only (:live for now)")
		return nil
	}
	return m.readAt(at)
}

// step moves the shown moment by dir steps; past the present it comes
// back live.
func (m *Model) step(dir int) tea.Cmd {
	d := m.opts.Step
	if d <= 0 {
		d = DefaultStep
	}
	base := m.Now()
	if m.past.on {
		base = m.past.want
	} else if dir > 0 {
		m.flashf(kit.LvlInfo, "live: nothing later ([ steps back, :at TIME)")
		return nil
	}
	at := base.Add(time.Duration(dir) * d)
	if !at.Before(m.Now()) {
		m.goLive()
		return nil
	}
	return m.readAt(at)
}

// readAt asks the source for the fleet at a moment, in a Cmd; a read
// still in flight is cancelled and its answer dropped.
func (m *Model) readAt(at time.Time) tea.Cmd {
	if m.opts.At == nil {
		m.flashf(kit.LvlWarn, "this fleet's source cannot read the past (:at needs --prometheus, or --hosts with serve --history)")
		return nil
	}
	if !m.past.on {
		m.past = pastState{on: true, live: m.fl}
	}
	if m.past.cancel != nil {
		m.past.cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.past.seq++
	m.past.want, m.past.cancel, m.past.loading = at, cancel, true
	seq, read := m.past.seq, m.opts.At
	return func() tea.Msg {
		defer cancel()
		fl, err := read(ctx, at)
		return pastMsg{seq: seq, at: at, fl: fl, err: err}
	}
}

// takePast shows a past fleet that came.
func (m *Model) takePast(msg pastMsg) tea.Cmd {
	if !m.past.on || msg.seq != m.past.seq {
		return nil // replaced by a newer read, or :live came first
	}
	m.past.loading, m.past.cancel = false, nil
	if msg.err != nil {
		if m.past.fl == nil {
			m.goLive()
		} else {
			m.past.want = m.past.at // the shown moment stays what [ and ] step from
		}
		m.flashf(kit.LvlCrit, ":at "+fleet.AtStamp(msg.at)+": "+msg.err.Error())
		return nil
	}
	if msg.fl == nil {
		msg.fl = &fleet.Fleet{Time: msg.at}
	}
	namesFromLive(msg.fl, m.past.live)
	m.past.fl, m.past.at = msg.fl, msg.at
	m.adopt(msg.fl)
	return m.refit(true)
}

// namesFromLive names each node of a past fleet that gave no snapshot
// then (no data at the moment, over SSH) as the live fleet names the node
// at its address: it went by its address alone, so the name the operator
// knows it by was missing from the table, and filtering by it said no
// node matches.
func namesFromLive(past, live *fleet.Fleet) {
	if live == nil {
		return
	}
	past.Nodes = slices.Clone(past.Nodes) // the source's answer is not ours to change
	for i := range past.Nodes {
		n := &past.Nodes[i]
		if n.Snap != nil || n.Name != n.Addr {
			continue
		}
		if l := live.Node(n.Addr); l != nil && l.Name != "" {
			n.Name = l.Name
		}
	}
}

// goLive leaves the past and shows the newest live state.
func (m *Model) goLive() {
	if m.past.cancel != nil {
		m.past.cancel()
	}
	live := m.past.live
	m.past = pastState{seq: m.past.seq}
	if live != nil {
		m.adopt(live)
	}
	m.flashf(kit.LvlInfo, "live")
}

// shownNow is the moment the table is aged from: the past moment shown,
// or now.
func (m *Model) shownNow() time.Time {
	if at := m.pastShown(); !at.IsZero() {
		return at
	}
	return m.Now()
}

// pastShown is the past moment the table shows, zero when it is live
// (or the first past answer has not come): the opened node says PAST
// with it.
func (m *Model) pastShown() time.Time {
	if m.past.on && m.past.fl != nil {
		return m.past.at
	}
	return time.Time{}
}

// pastPieces are the header's PAST marker, as the node console's: the
// moment, and the live clock, which goes first when the line is narrow;
// the marker's short form says it is reading with an ellipsis only.
func (m *Model) pastPieces() []headerPiece {
	if !m.past.on {
		return nil
	}
	now := m.Now()
	text := " PAST " + pastClock(m.past.want, now)
	short := text + " "
	if m.past.loading {
		ell := "…"
		if m.St.ASCII {
			ell = "..."
		}
		text += " reading" + ell
		short = strings.TrimSuffix(short, " ") + ell + " "
	}
	return []headerPiece{
		{spans: []kit.Span{{Lvl: kit.LvlDim, Text: " "}, {Lvl: kit.LvlCrit, Text: text + " "}},
			short: []kit.Span{{Lvl: kit.LvlDim, Text: " "}, {Lvl: kit.LvlCrit, Text: short}}},
		{spans: []kit.Span{{Lvl: kit.LvlDim, Text: " live is " + now.Local().Format("15:04:05")}}, drop: 4},
	}
}

// pastClock is a past moment: its time of day, with the date when it is
// not today's.
func pastClock(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if t.YearDay() == now.YearDay() && t.Year() == now.Year() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04:05")
}

// Shown is the fleet state the table shows: the live one, or the past
// one :at read (tools and tests that drive the model without a program).
func (m *Model) Shown() *fleet.Fleet { return m.fl }
