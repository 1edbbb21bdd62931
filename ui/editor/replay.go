package editor

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/replay"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// The replay's line under the verdict (issue 27): the record's last week
// replayed under the draft (engine/replay), after each edit, off the UI
// loop. An edit schedules a replay after ReplayDebounce; the replay runs
// in a tea.Cmd, one at a time: an edit made while one runs makes its
// answer stale (it is dropped) and a new one starts when it returns. The
// record is read once and kept for ReplayRecordTTL (reading a week is the
// slow part; replaying it under one partition is fast), so a draft is
// judged against a record at most that old.

// Bounds of the editor's replay.
const (
	// ReplaySpan is how far back the line looks: the record's usual week,
	// plan --replay's default.
	ReplaySpan = 7 * 24 * time.Hour
	// ReplayDebounce is how long after an edit the replay starts: keys
	// pressed faster cost one replay.
	ReplayDebounce = 150 * time.Millisecond
	// ReplayRecordTTL is how long a record read stays in use.
	ReplayRecordTTL = 5 * time.Minute
	// minReadAgo is how old a young record's read must be before the
	// line says when it was read.
	minReadAgo = 10 * time.Second
	// suggestBudget bounds S's search, as plan --suggest's default.
	suggestBudget = 10 * time.Second
)

// ReplayMsg is what the editor's replay work says: a debounce that ended,
// a replay's answer or a suggestion's. The root passes it to the editor.
type ReplayMsg struct {
	Sess *partition.Session
	kind replayKind
	gen  int
	rec  *replay.Record
	// recAt is when rec was read up to (shared: maybe by another
	// operator's editor, before this one asked).
	recAt time.Time
	res   *replay.Result
	sg    *replay.Suggestion
	in    replay.SuggestInput
	err   error
}

type replayKind uint8

const (
	replayDue replayKind = iota + 1
	replayDone
	suggestDone
)

// replayState is the editor's replay: the record it read, the draft's
// generation and the last answer.
type replayState struct {
	// dir is the history directory ("" : no record, no line).
	dir string
	// records is where the record is read and shared (SetHistory).
	records *replay.RecordCache
	// key is the draft (request and partition) last scheduled; gen counts
	// the drafts scheduled, so a stale answer is known.
	key string
	gen int
	// started is the draft generation last replayed (or being replayed).
	started int
	// running: a replay or a suggestion is out; pending: a draft waits
	// for it to return.
	running, pending bool
	suggesting       bool
	rec              *replay.Record
	recAt            time.Time
	// res is the answer for draft resGen; err why there is none.
	res    *replay.Result
	resGen int
	err    error
	// refOff and refRow are the refused list's position: the first
	// refusal shown and its first row shown. refW and refVisible are the
	// width and the rows of refusals of the last frame (the keys' page).
	refOff, refRow   int
	refW, refVisible int
}

// SetHistory gives the editor the console's history directory: with one,
// the draft is replayed against the record after each edit. The record
// is read through records, the process's cache its other editors share;
// nil gives this editor a cache of its own (one read per editor).
func (e *Editor) SetHistory(dir string, records *replay.RecordCache) {
	if records == nil {
		records = replay.NewRecordCache(1)
	}
	e.rp.dir, e.rp.records = dir, records
}

// replayOn reports whether the editor has a record to replay.
func (e *Editor) replayOn() bool { return e.rp.dir != "" }

// draftKey is the draft as the replay sees it: the request and the
// partition the plan would write.
func (e *Editor) draftKey() string {
	if e.Plan == nil || e.Plan.Next == nil {
		return ""
	}
	return fmt.Sprintf("%v|%v|%v", e.Req, e.Plan.Valid(), replay.Proposal(nil, e.Plan.Next))
}

// scheduleReplay starts the debounce when the draft changed since the
// last one scheduled (Replan runs on every new snapshot too, which does
// not change what the replay answers).
func (e *Editor) scheduleReplay() {
	if !e.replayOn() {
		return
	}
	key := e.draftKey()
	if key == e.rp.key {
		return
	}
	e.rp.key = key
	e.rp.gen++
	gen, sess := e.rp.gen, e.Sess
	e.Later = append(e.Later, tea.Tick(ReplayDebounce, func(time.Time) tea.Msg {
		return ReplayMsg{Sess: sess, kind: replayDue, gen: gen}
	}))
}

// replayMsg handles the replay's messages.
func (e *Editor) replayMsg(m ReplayMsg) {
	if !e.Owns(m.Sess) || e.Closed() {
		return
	}
	switch m.kind {
	case replayDue:
		if m.gen != e.rp.gen || m.gen == e.rp.started {
			return // a later edit has its own debounce, or it is replayed already
		}
		if e.rp.running {
			e.rp.pending = true
			return
		}
		e.startReplay()
	case replayDone, suggestDone:
		e.rp.running = false
		if m.rec != nil && m.rec != e.rp.rec {
			e.rp.rec, e.rp.recAt = m.rec, m.recAt
		}
		if m.kind == suggestDone {
			e.rp.suggesting = false
			e.suggested(m)
		} else if m.gen == e.rp.gen {
			e.rp.res, e.rp.resGen, e.rp.err = m.res, m.gen, m.err
		}
		// A draft whose debounce ended while this ran waits for it: one
		// replay at a time.
		if e.rp.pending && e.rp.started != e.rp.gen {
			e.startReplay()
		}
		e.rp.pending = false
		e.Invalidate()
	}
}

// recordFor is the record to replay: the one read, while it is fresh,
// else a command reads it again.
func (e *Editor) recordFor() (rec *replay.Record, dir string, now time.Time) {
	now = e.Now()
	if e.rp.rec != nil && now.Sub(e.rp.recAt) < replay.KeepFor(e.rp.rec, ReplaySpan, ReplayRecordTTL) {
		return e.rp.rec, "", now
	}
	return nil, e.rp.dir, now
}

// loadRecord is the record's last ReplaySpan up to now (in a command),
// as the process's editors share it through c (one read of the week for
// every operator of a serve, at most ReplayRecordTTL old), and when it
// was read up to.
func loadRecord(c *replay.RecordCache, dir string, now time.Time) (*replay.Record, time.Time, error) {
	return c.Get(dir, ReplaySpan, ReplayRecordTTL, now)
}

// startReplay replays the current draft in a command.
func (e *Editor) startReplay() {
	e.rp.started = e.rp.gen
	if e.Plan == nil || e.Plan.Next == nil || !e.Plan.Valid() {
		// Nothing to replay: the line says the draft is invalid.
		e.rp.res, e.rp.err, e.rp.resGen = nil, nil, e.rp.gen
		return
	}
	rec, dir, now := e.recordFor()
	gen, sess, plan, records := e.rp.gen, e.Sess, e.Plan, e.rp.records
	e.rp.running = true
	e.Do(func() tea.Msg {
		m := ReplayMsg{Sess: sess, kind: replayDone, gen: gen}
		if rec == nil {
			if rec, m.recAt, m.err = loadRecord(records, dir, now); m.err != nil {
				return m
			}
			m.rec = rec
		}
		m.res = replay.Run(rec, replay.Fixed(replay.Proposal(rec.AgentIDs(), plan.Next)), replay.Options{})
		return m
	})
}

// replayLine is the line under the verdict; nil without a record.
func (e *Editor) replayLine() []kit.Span {
	if !e.replayOn() {
		return nil
	}
	span := e.spanWords()
	under := " under this draft: "
	if !e.Dirty() {
		under = " under agent.toml as it is: "
	}
	switch {
	case e.rp.suggesting:
		return []kit.Span{{Lvl: kit.LvlDim, Text: span + ": finding the amounts that start every recorded session…"}}
	case e.rp.resGen != e.rp.gen || (e.rp.res == nil && e.rp.err == nil && e.Plan.Valid()):
		return []kit.Span{{Lvl: kit.LvlDim, Text: span + under + "replaying…"}}
	case e.rp.err != nil && errors.Is(e.rp.err, history.ErrEmpty):
		// A recorder just started: the next edit reads again.
		return []kit.Span{{Lvl: kit.LvlDim, Text: span + ": nothing recorded yet to replay (the recorder's first segment comes within its flush)"}}
	case e.rp.err != nil:
		return []kit.Span{{Lvl: kit.LvlWarn, Text: span + ": no replay: " + strings.TrimPrefix(FirstLine(e.rp.err.Error()), "replay: ")}}
	case e.rp.res == nil:
		return []kit.Span{{Lvl: kit.LvlDim, Text: span + ": replayed once the draft is valid"}}
	}
	res := e.rp.res
	if len(res.Refused) == 0 {
		line := []kit.Span{{Lvl: kit.LvlDim, Text: span + under}, {Lvl: kit.LvlOK, Text: "all " + kit.Plural(res.Sessions, "session") + " start"}}
		if e.W > 0 && kit.SpansWidth(line) > e.W-1 {
			// Cut at the screen's edge, the verdict was lost ("… as it
			// is: all 8 s…" at 80 columns, a young record's span being
			// long in words): the verdict first, as a refusal's count.
			line = []kit.Span{line[1], {Lvl: kit.LvlDim, Text: " · " + span + strings.TrimSuffix(under, ": ")}}
		}
		return line
	}
	// Under the file as it is, the refused sessions are ones the record
	// saw run (over the amounts: the manager counted a stopping container
	// as gone, or the agent read another file): said so, not as if today's
	// partition had starved them.
	verb := " would not have started"
	if !e.Dirty() {
		verb = " ran that these amounts refuse"
	}
	var parts []string
	var alone string
	for _, a := range res.Agents {
		if len(a.Refused) == 0 {
			continue
		}
		s := string(a.Agent) + " " + strconv.Itoa(len(a.Refused))
		alone = kit.Plural(len(a.Refused), "session") + " of " + string(a.Agent) + verb
		if a.Absent {
			// Its amounts would be the node's: what refuses is that the
			// draft has no such agent.
			s += " (not an agent of the draft)"
			alone += " (not an agent of the draft)"
		} else if why := overSlots(&a); why != "" {
			s += " (" + why + ")"
			alone += " (" + why + ")"
		}
		parts = append(parts, s)
	}
	lists := ""
	if e.hasAct(ActEdRefused) {
		lists = " · R lists them"
	}
	var line []kit.Span
	if len(parts) == 1 {
		line = []kit.Span{{Lvl: kit.LvlDim, Text: span + under}, {Lvl: kit.LvlCrit, Text: alone}, {Lvl: kit.LvlDim, Text: lists}}
	} else {
		// Several agents: the total first, so that a narrow screen that
		// cuts the line keeps what matters; then each agent's share.
		total := strconv.Itoa(len(res.Refused)) + " of " + kit.Plural(res.Sessions, "session") + verb
		line = []kit.Span{{Lvl: kit.LvlDim, Text: span + under}, {Lvl: kit.LvlCrit, Text: total}, {Lvl: kit.LvlDim, Text: lists + ": "},
			{Lvl: kit.LvlCrit, Text: strings.Join(parts, "; ")}}
	}
	if lists != "" && e.W > 0 && kit.SpansWidth(line) > e.W-1 {
		// Cut at the screen's edge, the line lost the key that opens the
		// whole list, then what would not have started (the tours at 80
		// columns): the key and the count go first, the span it speaks
		// of last, where the edge may cut it.
		first := []kit.Span{{Lvl: kit.LvlDim, Text: "R lists them: "}, line[1]}
		if len(line) == 4 {
			first = append(first, kit.Span{Lvl: kit.LvlDim, Text: ": "}, line[3])
		}
		line = append(first, kit.Span{Lvl: kit.LvlDim, Text: " · " + span + strings.TrimSuffix(under, ": ")})
	}
	return line
}

// overSlots says which slots' demand went over the amount, as plan
// --replay's verdict does: "cuda.shares peak 2.6 > 2.0".
func overSlots(a *replay.AgentResult) string {
	var worst []string
	for _, s := range a.Slots {
		if s.Over > 0 {
			worst = append(worst, string(s.Slot)+" peak "+replay.Amount(s.Slot, s.Peak)+" > "+replay.Amount(s.Slot, s.Amount))
		}
	}
	return strings.Join(worst, ", ")
}

// spanWords is the span the line speaks of: the last ReplaySpan, or, of
// a record that holds less, how much it holds (a console recording for
// two minutes said "last 7d"), and how long ago it was read when that is
// a noticeable part of it (the record grew since).
func (e *Editor) spanWords() string {
	span, partial, ago := e.spanParts()
	switch {
	case ago != "":
		return span + " (all the record held, read " + ago + " ago)"
	case partial:
		return span + " (all the record holds)"
	}
	return span
}

// spanShort is spanWords in fewer words, for a title at 80 columns:
// "last 2m (whole record, read 1m ago)"; with short set, without the
// record's words: "last 2m, read 1m ago".
func (e *Editor) spanShort(short bool) string {
	span, partial, ago := e.spanParts()
	switch {
	case short && ago != "":
		return span + ", read " + ago + " ago"
	case short || !partial:
		return span
	case ago != "":
		return span + " (whole record, read " + ago + " ago)"
	}
	return span + " (whole record)"
}

// spanParts are spanWords' parts: "last 7d" or "last 2m"; whether that
// is all the record holds, less than ReplaySpan; how long ago the record
// was read ("" where that is no noticeable part of it).
func (e *Editor) spanParts() (span string, partial bool, ago string) {
	if res := e.rp.res; res != nil && !res.From.IsZero() {
		if held := res.To.Sub(res.From); held < ReplaySpan-time.Minute {
			if d := e.Now().Sub(e.rp.recAt); !e.rp.recAt.IsZero() && d >= minReadAgo && d >= held/10 {
				ago = kit.FmtAge(d)
			}
			return "last " + replay.Days(held), true, ago
		}
	}
	return "last " + spanText(ReplaySpan), false, ""
}

// spanText is a span as --replay takes it: 7d, 36h.
func spanText(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
	return fmt.Sprintf("%dh", int(d/time.Hour))
}

// openRefused shows the sessions the draft would have refused.
func (e *Editor) openRefused() {
	if !e.replayOn() {
		return
	}
	e.Showing, e.rp.refOff, e.rp.refRow = edRefused, 0, 0
}

// viewRefused draws the refused list: a header, then each refusal's
// time, kernel, session, owner, agent and what it asked, with why on the
// rows below it. It moves a refusal at a time (refMove), so that a
// screen begins with a refusal's line, not the end of a reason whose
// line is off it; its position is a refusal and a row within it
// (rp.refOff, rp.refRow), a reason taller than the screen being read
// row by row. Only the refusals on the screen are wrapped and drawn: a
// draft that refuses 200,000 sessions of a busy week costs a frame what
// one screen of them costs.
func (e *Editor) viewRefused(w, h int) []string {
	st := e.St
	row := func(sp ...kit.Span) string {
		return kit.SpansRow(st, append([]kit.Span{{Lvl: kit.LvlPlain, Text: " "}}, sp...), w)
	}
	// With no change the list is of sessions the record saw run that
	// the file's amounts refuse, as the line says: not "under the
	// draft" (the tour: R on a draft of no change).
	under, by := " Refused under the draft ", " Refused by the draft "
	if !e.Dirty() {
		under, by = " Refused under agent.toml as it is ", " Refused by agent.toml "
	}
	// Longest first: at 80 columns "of the record" and "read 1m ago" were
	// cut off the end; the short forms keep which file, the span, whether
	// it is all the record and how old it is.
	titles := [][]kit.Span{
		{{Lvl: kit.LvlFocus, Text: under}, {Lvl: kit.LvlDim, Text: " " + e.spanWords() + " of the record "}},
		{{Lvl: kit.LvlFocus, Text: under}, {Lvl: kit.LvlDim, Text: " " + e.spanShort(false) + " "}},
		{{Lvl: kit.LvlFocus, Text: by}, {Lvl: kit.LvlDim, Text: " " + e.spanShort(false) + " "}},
		{{Lvl: kit.LvlFocus, Text: by}, {Lvl: kit.LvlDim, Text: " " + e.spanShort(true) + " "}},
	}
	back := []kit.Span{{Lvl: kit.LvlDim, Text: "esc back"}}
	res := e.rp.res
	var msg []kit.Span
	listed := false
	switch {
	case e.rp.resGen != e.rp.gen || res == nil:
		msg = e.replayLine()
	case len(res.Refused) == 0:
		// As the title: with no change it is the file that starts them.
		what := " starts under this draft"
		if !e.Dirty() {
			what = " starts under agent.toml as it is"
		}
		msg = []kit.Span{{Lvl: kit.LvlOK, Text: "every recorded session of the " + e.spanWords() + what}}
		// Shorter where the row would cut it (80 columns).
		for _, t := range []string{"every recorded session of the " + e.spanShort(false) + what,
			"none refused in the " + e.spanShort(false)} {
			if kit.SpansWidth(msg)+1 <= w {
				break
			}
			msg[0].Text = t
		}
	default:
		listed = true
	}
	if !listed {
		e.rp.refOff, e.rp.refRow = 0, 0
		out := []string{kit.TitleRowFirst(st, w, titles, back, 0, 0, 0)}
		if msg != nil && h > 1 {
			out = append(out, row(msg...))
		}
		return out
	}
	refs := res.Refused
	visible := max(h-2, 1) // the title and the header
	e.rp.refW, e.rp.refVisible = w, visible
	// The last position, from which the rest fill the screen: G's and
	// the scrolling's limit, found from the end.
	li, lr, used := len(refs), 0, 0
	for li > 0 && used < visible {
		li--
		used += e.refRows(li, w)
	}
	if used > visible {
		lr = used - visible
		if e.refRows(li, w) <= visible && li+1 < len(refs) {
			// The last screen begins with a refusal's line, rows to
			// spare below, where one that fits would be cut.
			li, lr = li+1, 0
		}
	}
	if e.rp.refOff > li || e.rp.refOff == li && e.rp.refRow > lr {
		e.rp.refOff, e.rp.refRow = li, lr
	}
	e.rp.refOff = max(e.rp.refOff, 0)
	e.rp.refRow = min(max(e.rp.refRow, 0), e.refRows(e.rp.refOff, w)-1)
	var body []string
	last := e.rp.refOff
	cols := refCols(w)
	for i := e.rp.refOff; i < len(refs) && len(body) < visible; i++ {
		rows := e.refEntry(row, &refs[i], w, cols)
		if i == e.rp.refOff {
			rows = rows[e.rp.refRow:]
		}
		body = append(body, rows...)
		last = i
	}
	// The position names the refusals any row of which is on the screen.
	out := []string{kit.TitleRowFirst(st, w, titles, back, len(refs), last-e.rp.refOff+1, e.rp.refOff)}
	if h > 1 {
		head := kit.PadRight("TIME", cols.timeW) + kit.PadRight("KERNEL", 14)
		if cols.session {
			head += kit.PadRight("SESSION", 14)
		}
		if cols.owner {
			head += kit.PadRight("OWNER", 14)
		}
		out = append(out, row(kit.Span{Lvl: kit.LvlDim, Text: head + kit.PadRight("AGENT", 16) + "ASKED"}))
	}
	for _, b := range body {
		if len(out) >= h {
			break
		}
		out = append(out, b)
	}
	return out
}

// refColumns are the refused list's columns at a width: its optional
// ones, and TIME's width and form.
type refColumns struct {
	session, owner bool
	timeW          int
	timeForm       string
}

// refCols leaves out OWNER, then SESSION and the year, where ASKED would
// be cut: at 80 columns the five before it took 79 (the tour). What a
// session asked is what the list is read for; the kernel names it.
func refCols(w int) refColumns {
	c := refColumns{session: w >= 96, owner: w >= 110, timeW: 20, timeForm: "2006-01-02 15:04:05"}
	if !c.session {
		c.timeW, c.timeForm = 16, "01-02 15:04:05"
	}
	return c
}

// refEntry is refusal r's rows at width w: its line, then why.
func (e *Editor) refEntry(row func(...kit.Span) string, r *replay.Refusal, w int, cols refColumns) []string {
	who := ""
	if cols.session {
		who += kit.PadRight(short(r.Session), 14)
	}
	if cols.owner {
		who += kit.PadRight(short(r.Owner), 14)
	}
	rows := []string{row(kit.Span{Lvl: kit.LvlPlain, Text: kit.PadRight(r.At.Local().Format(cols.timeForm), cols.timeW)},
		kit.Span{Lvl: kit.LvlAccent, Text: kit.PadRight(short(string(r.Kernel)), 14)},
		kit.Span{Lvl: kit.LvlPlain, Text: who + kit.PadRight(string(r.Agent), 16)},
		kit.Span{Lvl: kit.LvlPlain, Text: replay.Requested(r.Requested)})}
	for _, ln := range refusedWrap(r, w) {
		rows = append(rows, row(append([]kit.Span{{Lvl: kit.LvlPlain, Text: "    "}}, ln...)...))
	}
	return rows
}

// refusedWrap is refusal r's reason wrapped under its line at width w.
func refusedWrap(r *replay.Refusal, w int) [][]kit.Span {
	return kit.WrapWords([]kit.Span{{Lvl: kit.LvlWarn, Text: refusedWhy(r)}}, max(w-6, 1))
}

// refRows is how many rows refusal i takes at width w.
func (e *Editor) refRows(i, w int) int {
	refs := e.rp.res.Refused
	if i < 0 || i >= len(refs) {
		return 1
	}
	return 1 + len(refusedWrap(&refs[i], w))
}

// refMove moves the refused list by n rows (up when negative), wrapping
// only the refusals it passes, to the start of a refusal where the one
// it lands in fits on the screen: the next one's (ahead) or its own. The
// next frame clamps it to the list.
func (e *Editor) refMove(n int, ahead bool) {
	if e.rp.res == nil || len(e.rp.res.Refused) == 0 {
		return
	}
	refs, w := e.rp.res.Refused, e.rp.refW
	if w <= 0 {
		w, _ = e.Size()
	}
	i, r := min(max(e.rp.refOff, 0), len(refs)-1), max(e.rp.refRow, 0)
	for n > 0 && i < len(refs) {
		rows := e.refRows(i, w)
		step := min(n, rows-r)
		r, n = r+step, n-step
		if r >= rows {
			if i == len(refs)-1 {
				r = rows - 1
				break
			}
			i, r = i+1, 0
		}
	}
	for n < 0 && (i > 0 || r > 0) {
		if r == 0 {
			i--
			r = e.refRows(i, w)
		}
		step := min(-n, r)
		r, n = r-step, n+step
	}
	vis := e.rp.refVisible
	if vis <= 0 {
		// No frame drawn yet: the one the editor's size gives.
		_, sh := e.Size()
		vis = sh - 2
	}
	if r > 0 && e.refRows(i, w) <= max(vis, 1) {
		if ahead && i < len(refs)-1 {
			i++
		}
		r = 0
	}
	e.rp.refOff, e.rp.refRow = i, r
}

// refKey moves the refused list as a list's keys do: a refusal (a row
// of one taller than the screen), a screen (what the last frame showed:
// down, to the refusal it cut; up, to the one after the row it reaches,
// so that nothing between is passed unseen), the first, the last
// screen.
func (e *Editor) refKey(act kit.Action) {
	page := max(e.rp.refVisible, 1)
	switch act {
	case kit.ActUp:
		e.refMove(-1, false)
	case kit.ActDown:
		e.refMove(1, true)
	case kit.ActPageUp:
		e.refMove(-page, true)
	case kit.ActPageDown:
		e.refMove(page, false)
	case kit.ActTop:
		e.rp.refOff, e.rp.refRow = 0, 0
	case kit.ActBottom:
		e.rp.refOff, e.rp.refRow = math.MaxInt, 0 // clamped when drawn
	}
}

// refusedWhy is a refusal's reason as the list words it.
func refusedWhy(r *replay.Refusal) string {
	why := r.Reason
	if r.Before {
		// Its TIME is the span's start, not an arrival (plan --replay
		// says the same).
		why = "(running at the start) " + why
	}
	if len(r.CouldRunOn) > 0 {
		ids := make([]string, len(r.CouldRunOn))
		for i, id := range r.CouldRunOn {
			ids[i] = string(id)
		}
		why += "; could have run on " + strings.Join(ids, ", ")
	}
	return why
}

func short(s string) string {
	if s == "" {
		return "-"
	}
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// suggest (S) fills the draft with the amounts replay.Suggest finds for
// the record, in a command; the answer becomes an edit (u undoes it).
func (e *Editor) suggest() {
	if !e.replayOn() || e.refuseWhileApplying() {
		return
	}
	if e.Plan.Format != agentconfig.FormatSlotBased {
		e.Flashf(kit.LvlWarn, "S suggests amounts of the slot-based format (Backend.AI main's): this draft is "+string(e.Plan.Format))
		return
	}
	if why := e.manualOnly("filling in the suggestion"); why != "" {
		e.Flashf(kit.LvlWarn, why)
		return
	}
	if e.rp.suggesting {
		e.Flashf(kit.LvlInfo, "the suggestion is being worked out")
		return
	}
	in, err := e.suggestInput()
	if err != nil {
		e.Flashf(kit.LvlWarn, err.Error())
		return
	}
	rec, dir, now := e.recordFor()
	sess, records := e.Sess, e.rp.records
	e.rp.suggesting, e.rp.running = true, true
	e.Invalidate()
	e.Do(func() tea.Msg {
		m := ReplayMsg{Sess: sess, kind: suggestDone, in: in}
		if rec == nil {
			if rec, m.recAt, m.err = loadRecord(records, dir, now); m.err != nil {
				return m
			}
			m.rec = rec
		}
		m.sg = replay.Suggest(rec, in)
		return m
	})
}

// suggestInput is what the suggestion must respect, as plan --suggest
// takes it: today's file's amounts, the node's total less the config's
// reservations, each slot's step.
func (e *Editor) suggestInput() (replay.SuggestInput, error) {
	cur := e.Plan.Current
	base := e.Sess.Base()
	if cur == nil || base == nil {
		return replay.SuggestInput{}, fmt.Errorf("S: the file as it is is not known yet")
	}
	today := replay.Today(cur)
	if replay.Unslotted(today) != "" {
		return replay.SuggestInput{}, fmt.Errorf("S: agent.toml gives its agents no amounts (%s): the suggestion changes a manual slot-based partition of two or more agents; apply one first", base.Mode)
	}
	in := replay.SuggestInput{Today: today, Total: model.ResourceSlot{}, Budget: suggestBudget}
	for s, v := range cur.Totals {
		in.Total[s] = v
	}
	var quantum model.Dec
	if e.Snap != nil {
		q, err := replay.SuggestQuantum(e.Snap.Allocator, nil)
		if err != nil {
			return replay.SuggestInput{}, fmt.Errorf("S: %w", err)
		}
		quantum = q
	}
	in.Limits(base, quantum)
	return in, nil
}

// suggested puts the suggestion in the draft: every amount it found
// replaces the draft's for that agent and slot (one equal to the file's
// drops the draft's set), as one edit.
func (e *Editor) suggested(m ReplayMsg) {
	if m.err != nil {
		e.Flashf(kit.LvlWarn, "no suggestion: "+FirstLine(m.err.Error()))
		return
	}
	sg := m.sg
	next := cloneRequest(e.Req)
	for _, a := range m.in.Today {
		for _, s := range sg.Amounts[a.ID].Names() {
			v := sg.Amounts[a.ID][s]
			next.Slots = slices.DeleteFunc(next.Slots, func(x partition.SlotSet) bool { return x.Agent == a.ID && x.Slot == s })
			if g, ok := a.Given[s]; !ok || !g.Equal(v) {
				next.Slots = append(next.Slots, partition.SlotSet{Agent: a.ID, Slot: s, Amount: v})
			}
		}
	}
	flags := sg.Flags(m.in.Today)
	// short is the flash where msg does not fit the footer (at 80
	// columns the footer cut the flash after "start every record…": the
	// count, u and the warning to weigh a raise were never seen).
	var msg, short string
	switch {
	case sg.AllServed && len(flags) == 0:
		msg = "suggestion: the file's amounts already start every recorded session"
		short = "suggestion: no change: every recorded session starts"
	case sg.AllServed:
		msg = "suggestion: every recorded session starts under " + strings.Join(flags, " ")
		short = "suggestion: all sessions start"
	default:
		msg = fmt.Sprintf("suggestion: no amounts within the node start every recorded session (%s); these refuse the fewest, %d", sg.Wanting(), len(sg.Result.Refused))
		short = fmt.Sprintf("suggestion: %d refused at the fewest", len(sg.Result.Refused))
	}
	if fmt.Sprint(next) == fmt.Sprint(e.Req) {
		if !sg.AllServed || len(flags) > 0 {
			short += "; the draft has them"
		}
		e.flashShort(kit.LvlInfo, msg+"; the draft has them already", short)
		return
	}
	e.edit(next)
	if why := sg.OverheldWords(); why != "" {
		// As plan --suggest says it: the raise may serve sessions the
		// manager sent only because it counted a stopping container as
		// gone.
		e.flashShort(kit.LvlWarn, msg+" (u undoes); weigh the raise before applying it: "+why,
			"suggestion: weigh the raise before applying it (u undoes)")
		return
	}
	e.flashShort(kit.LvlInfo, msg+" (u undoes)", short+" (u undoes)")
}

// flashShort is Flashf with short shown where text does not fit.
func (e *Editor) flashShort(l kit.Level, text, short string) {
	e.Flashf(l, text)
	e.Flash.Short = short
}

// hasAct reports whether the console's key map binds act.
func (e *Editor) hasAct(act kit.Action) bool {
	for _, b := range e.Keys.BindingList {
		if b.Act == act {
			return true
		}
	}
	return false
}
