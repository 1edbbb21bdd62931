package ui

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
)

// The desk's work runs off the UI loop: opening a draft writes the draft
// record, an apply fsyncs and renames, a review and the journal read
// files, and asking who holds the draft reads the record. Each runs in a
// tea.Cmd and comes back as one of these messages, so Update never waits
// on a disk, nor on another operator's apply.
type (
	// deskPolledMsg is what the desk says now: who holds the draft, its
	// last write, and whether this console's session still holds it.
	deskPolledMsg struct {
		hold, write   partition.Hold
		held, written bool
		sess          *partition.Session
		mine          bool
		lost          error
	}
	// deskOpenedMsg is the outcome of opening the draft (e).
	deskOpenedMsg struct {
		sess   *partition.Session
		err    error
		holder partition.Hold // who holds it, on ErrBusy
	}
	// deskAppliedMsg is the outcome of an apply.
	deskAppliedMsg struct {
		sess *partition.Session
		plan *partition.Plan
		res  *partition.ApplyResult
		err  error
	}
	// deskReviewedMsg is the outcome of rebasing a stale draft.
	deskReviewedMsg struct {
		sess *partition.Session
		err  error
	}
	// deskJournalMsg is the journal's last records.
	deskJournalMsg struct {
		recs []agentconfig.JournalRecord
		bad  int
		err  error
	}
	// deskClosedMsg says a session was given back.
	deskClosedMsg struct{}
)

// deskWork is the desk work a console has under way.
type deskWork struct {
	polling bool // a pollDesk command is out
	opening bool // an Open is out

	// mu guards held and ended, which commands and Close reach off the
	// UI loop.
	mu sync.Mutex
	// held are the sessions this console opened and has not given back
	// yet: the editor's, and any being closed by a command.
	held  map[*partition.Session]bool
	ended bool
}

// own records a newly opened session; false when the console has ended
// meanwhile (the caller then gives it back).
func (w *deskWork) own(s *partition.Session) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return false
	}
	if w.held == nil {
		w.held = map[*partition.Session]bool{}
	}
	w.held[s] = true
	return true
}

// release gives sessions back (all held ones when none are named).
func (w *deskWork) release(only ...*partition.Session) {
	w.mu.Lock()
	var todo []*partition.Session
	for s := range w.held {
		if len(only) == 0 || slices.Contains(only, s) {
			todo = append(todo, s)
			delete(w.held, s)
		}
	}
	w.mu.Unlock()
	for _, s := range todo {
		s.Close()
	}
}

// end gives every session back and makes later opens give theirs back
// at once.
func (w *deskWork) end() {
	w.mu.Lock()
	w.ended = true
	w.mu.Unlock()
	w.release()
}

// deskMsg handles the desk's messages the root passes the editor.
func (e *editor) deskMsg(msg tea.Msg) {
	switch msg := msg.(type) {
	case deskPolledMsg:
		if e.owns(msg.sess) && msg.lost != nil && e.lost == "" {
			e.lostDraft(msg.lost)
		}
		e.check()
	case deskAppliedMsg:
		if e.owns(msg.sess) {
			e.applied(msg)
		}
	case deskReviewedMsg:
		e.reviewed(msg)
	case deskJournalMsg:
		e.journal, e.journalBad, e.journalErr = msg.recs, msg.bad, ""
		if msg.err != nil {
			e.journalErr = msg.err.Error()
		}
		e.invalidate()
	}
}

// leave closes the editor and gives the draft back (in a command: it
// rewrites the draft record).
func (e *editor) leave() {
	if e.closed() {
		return
	}
	sess, w := e.sess, e.work
	e.close()
	e.do(func() tea.Msg {
		w.release(sess)
		return deskClosedMsg{}
	})
	e.invalidate()
}

// doApply starts the apply the dialog confirmed; its outcome comes back
// as a deskAppliedMsg.
func (e *editor) doApply(p *partition.Plan, force bool) {
	if e.applying {
		e.flashf(lvlWarn, "an apply is in progress: wait for its result before applying again")
		return
	}
	e.applying = true
	e.result = []span{{lvlWarn, "applying: writing " + filepath.Base(e.desk.Path()) + ", then reading it back…"}}
	e.invalidate()
	sess := e.sess
	e.do(func() tea.Msg {
		res, err := sess.Apply(p, force)
		return deskAppliedMsg{sess: sess, plan: p, res: res, err: err}
	})
}

// applied reports the outcome of this editor's apply.
func (e *editor) applied(m deskAppliedMsg) {
	e.applying = false
	res, err, p := m.res, m.err, m.plan
	switch {
	case res == nil:
		e.sessionError(err)
		e.result = []span{{lvlCrit, "not applied: " + firstLine(err.Error())}}
	case err != nil:
		e.result = []span{{lvlCrit, "written, but the file read back does not give the planned partition: " + strings.Join(res.Mismatch, "; ")},
			{lvlPlain, " · previous version in " + res.Backup + " (J: journal)"}}
	default:
		e.result = []span{{lvlOK, "applied " + e.now().Format("15:04:05") + ": " + plural(len(p.Edits), "change") + " written and verified"},
			{lvlWarn, " · restart the agents: they read agent.toml only at start-up"},
			{lvlDim, " · backup " + res.Backup}}
	}
	flashApplied(e.kitCommon, m)
	if res == nil {
		return
	}
	// The session's base is the new file: the draft is done.
	e.req, e.undo = partition.Request{}, nil
	e.view = edGrid
	e.replan()
}

// flashApplied says an apply's outcome in the flash line: under the
// editor's own result, or alone when the editor that started it was left
// meanwhile.
func flashApplied(c *kitCommon, m deskAppliedMsg) {
	switch res, err, p := m.res, m.err, m.plan; {
	case res == nil:
		c.flashf(lvlCrit, "not applied: "+firstLine(err.Error()))
	case err != nil:
		c.flashf(lvlCrit, "written but verification mismatch: "+firstLine(strings.Join(res.Mismatch, "; ")))
	default:
		c.flashf(lvlOK, "applied and verified ("+plural(len(p.Edits), "change")+"); restart the agents to take effect")
	}
}

// review rebases a stale draft on the file as it is now (in a command: it
// reads the file) and shows the recomputed plan: the only way out of
// staleness.
func (e *editor) review() {
	if e.stale == "" {
		e.view, e.planOff = edPlan, 0
		return
	}
	sess := e.sess
	e.do(func() tea.Msg { return deskReviewedMsg{sess: sess, err: sess.Review()} })
}

// reviewed shows the plan recomputed on the file as it is now.
func (e *editor) reviewed(m deskReviewedMsg) {
	if !e.owns(m.sess) {
		return
	}
	if m.err != nil {
		e.sessionError(m.err)
		return
	}
	e.stale = ""
	e.replan()
	e.flashf(lvlInfo, "reviewed: the plan is recomputed on agent.toml as it is now")
	e.view, e.planOff = edPlan, 0
}

// loadJournal reads the last records of the desk's journal.
func (e *editor) loadJournal() {
	d := e.desk
	e.do(func() tea.Msg {
		recs, bad, err := d.Journal(journalRows)
		return deskJournalMsg{recs: recs, bad: bad, err: err}
	})
}

// check runs on the clock tick and on the desk's news, and reads
// nothing: a draft goes stale when the desk wrote, or when the engine's
// snapshot carries another hash of agent.toml (it follows the file: an
// edit or a replacement on disk); a newer snapshot re-plans (live
// holders).
func (e *editor) check() {
	if e.closed() || e.lost != "" {
		return
	}
	hash := ""
	if e.snap != nil {
		hash = e.snap.ConfigHash
	}
	err := e.sess.Stale(hash)
	switch {
	case err == nil:
	case errors.Is(err, partition.ErrStale):
		reason := e.staleReason(err)
		if e.stale == "" {
			e.flashf(lvlWarn, "the draft is STALE: "+reason+"; p reviews the recomputed plan")
		}
		e.stale = reason
		e.invalidate()
	default:
		e.lostDraft(err)
	}
	if e.lost == "" && e.snap != e.planSnap {
		e.replan()
	}
}

// lostDraft says the session no longer holds the draft.
func (e *editor) lostDraft(err error) {
	e.sessionError(err)
	e.flashf(lvlCrit, "you no longer hold the draft: "+e.lost)
	e.input = nil
	if e.dlg != nil && e.dlg.kind == dlgApply {
		e.dlg.close()
	}
}
