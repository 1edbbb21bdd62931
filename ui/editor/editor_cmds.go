package editor

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/internal/shword"

	"github.com/fgtop/fgtop/ui/kit"
)

// The desk's work runs off the UI loop: opening a draft writes the draft
// record, an apply fsyncs and renames, a review and the journal read
// files, and asking who holds the draft reads the record. Each runs in a
// tea.Cmd and comes back as one of these messages, so Update never waits
// on a disk, nor on another operator's apply.
type (
	// DeskPolledMsg is what the desk says now: who holds the draft, its
	// last write, and whether this console's session still holds it.
	DeskPolledMsg struct {
		Hold, Write   partition.Hold
		Held, Written bool
		// FileHash is the sha256 of agent.toml as the desk read it last
		// ("" unknown): the agents' restart state is news of that version
		// only where it was judged on it.
		FileHash string
		Sess     *partition.Session
		Mine     bool
		Lost     error
	}
	// DeskOpenedMsg is the outcome of opening the draft (e).
	DeskOpenedMsg struct {
		Sess   *partition.Session
		Err    error
		Holder partition.Hold // who holds it, on ErrBusy
	}
	// DeskAppliedMsg is the outcome of an apply.
	DeskAppliedMsg struct {
		Sess *partition.Session
		Plan *partition.Plan
		res  *partition.ApplyResult
		Err  error
	}
	// DeskReviewedMsg is the outcome of rebasing a stale draft.
	DeskReviewedMsg struct {
		Sess *partition.Session
		Err  error
	}
	// DeskJournalMsg is the journal's last records.
	DeskJournalMsg struct {
		recs []agentconfig.JournalRecord
		// what each record changed, one line (journalChanges), by index
		what []string
		bad  int
		Err  error
	}
	// DeskClosedMsg says a session was given back.
	DeskClosedMsg struct{}
	// DeskUndoPreviewMsg is what undoing the last apply would do (U).
	DeskUndoPreviewMsg struct {
		Sess    *partition.Session
		Preview *partition.RollbackPreview
		Err     error
	}
	// DeskUndoneMsg is the outcome of a rollback the dialog confirmed.
	DeskUndoneMsg struct {
		Sess *partition.Session
		res  *agentconfig.CommitResult
		Err  error
	}
)

// DeskWork is the desk work a console has under way.
type DeskWork struct {
	Polling bool // a pollDesk command is out
	Opening bool // an Open is out

	// mu guards held and ended, which commands and Close reach off the
	// UI loop.
	mu sync.Mutex
	// held are the sessions this console opened and has not given back
	// yet: the editor's, and any being closed by a command.
	Held  map[*partition.Session]bool
	ended bool
}

// Own records a newly opened session; false when the console has ended
// meanwhile (the caller then gives it back).
func (w *DeskWork) Own(s *partition.Session) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return false
	}
	if w.Held == nil {
		w.Held = map[*partition.Session]bool{}
	}
	w.Held[s] = true
	return true
}

// Release gives sessions back (all held ones when none are named).
func (w *DeskWork) Release(only ...*partition.Session) {
	w.mu.Lock()
	var todo []*partition.Session
	for s := range w.Held {
		if len(only) == 0 || slices.Contains(only, s) {
			todo = append(todo, s)
			delete(w.Held, s)
		}
	}
	w.mu.Unlock()
	for _, s := range todo {
		s.Close()
	}
}

// End gives every session back and makes later opens give theirs back
// at once.
func (w *DeskWork) End() {
	w.mu.Lock()
	w.ended = true
	w.mu.Unlock()
	w.Release()
}

// deskMsg handles the desk's messages the root passes the editor.
func (e *Editor) deskMsg(msg tea.Msg) {
	switch msg := msg.(type) {
	case DeskPolledMsg:
		if e.Owns(msg.Sess) && msg.Lost != nil && e.Lost == "" {
			e.lostDraft(msg.Lost)
		}
		if msg.Written && msg.Write != e.jourWrite {
			e.jourWrite = msg.Write
			if e.Showing == edJournal {
				e.loadJournal()
			}
			if e.staleShut && e.Stale != "" && e.Lost == "" {
				e.staleShutNotice()
			}
		}
		e.check()
	case DeskAppliedMsg:
		if e.Owns(msg.Sess) {
			e.applied(msg)
		}
	case DeskReviewedMsg:
		e.reviewed(msg)
	case DeskUndoPreviewMsg:
		if e.Owns(msg.Sess) {
			e.undoPreviewed(msg)
		}
	case DeskUndoneMsg:
		if e.Owns(msg.Sess) {
			e.undone(msg)
		}
	case DeskJournalMsg:
		e.journal, e.journalWhat, e.journalBad, e.journalErr = msg.recs, msg.what, msg.bad, ""
		if msg.Err != nil {
			e.journalErr = msg.Err.Error()
		}
		e.Invalidate()
	}
}

// OpenedFlash is the footer's note while the editor is open. Leaving drops
// it: on the main screen it said, its time out, that the draft was still
// the operator's.
func OpenedFlash(path string) string {
	return "editing " + path + ": the draft is yours until you leave (esc)"
}

// OpenedFlashShort is OpenedFlash where it does not fit beside the keys
// (at 80 columns even /etc/backend.ai/agent.toml cut it before "yours"):
// the pane's title names the file.
const OpenedFlashShort = "editing: the draft is yours until you leave (esc)"

// leave closes the editor and gives the draft back (in a command: it
// rewrites the draft record).
func (e *Editor) leave() {
	if e.Closed() {
		return
	}
	sess, w := e.Sess, e.Work
	e.Close()
	e.DropFlash(OpenedFlash(e.Desk.Path()))
	e.Do(func() tea.Msg {
		w.Release(sess)
		return DeskClosedMsg{}
	})
	e.Invalidate()
}

// DoApply starts the apply the dialog confirmed; its outcome comes back
// as a deskAppliedMsg.
func (e *Editor) DoApply(p *partition.Plan, force bool) {
	if e.Applying {
		e.Flashf(kit.LvlWarn, "an apply is in progress: wait for its result before applying again")
		return
	}
	e.Applying = true
	e.result = [][]kit.Span{{{Lvl: kit.LvlWarn, Text: "applying: writing " + filepath.Base(e.Desk.Path()) + ", then reading it back…"}}}
	e.Invalidate()
	sess := e.Sess
	e.Do(func() tea.Msg {
		res, err := sess.Apply(p, force)
		return DeskAppliedMsg{Sess: sess, Plan: p, res: res, Err: err}
	})
}

// applied reports the outcome of this editor's apply.
func (e *Editor) applied(m DeskAppliedMsg) {
	e.Applying = false
	res, err, p := m.res, m.Err, m.Plan
	switch {
	case res == nil:
		e.sessionError(err)
		e.result = [][]kit.Span{{{Lvl: kit.LvlCrit, Text: "not applied: " + FirstLine(err.Error())}}}
	case err != nil:
		e.result = [][]kit.Span{{{Lvl: kit.LvlCrit, Text: "written, but the file read back does not give the planned partition: " + strings.Join(res.Mismatch, "; ")},
			{Lvl: kit.LvlPlain, Text: " · previous version in " + res.Backup + " (J: journal)"}}, undoSpans()}
	default:
		e.wrote = res.NewHash
		e.result = [][]kit.Span{{{Lvl: kit.LvlOK, Text: "applied " + e.Now().Format("15:04:05") + ": " + kit.Plural(len(p.Edits), "change") + " written and verified"},
			restartMark, {Lvl: kit.LvlDim, Text: " · backup " + res.Backup}}, undoSpans()}
	}
	FlashApplied(e.Common, m)
	if res == nil {
		return
	}
	// The session's base is the new file: the draft is done.
	e.Req, e.undo = partition.Request{}, nil
	e.Showing = EdGrid
	e.Replan()
}

// FlashApplied says an apply's outcome in the flash line: under the
// editor's own result, or alone when the editor that started it was left
// meanwhile.
func FlashApplied(c *kit.Common, m DeskAppliedMsg) {
	switch res, err, p := m.res, m.Err, m.Plan; {
	case res == nil:
		c.Flashf(kit.LvlCrit, "not applied: "+FirstLine(err.Error()))
	case err != nil:
		c.Flashf(kit.LvlCrit, "written but verification mismatch: "+FirstLine(strings.Join(res.Mismatch, "; ")))
	default:
		c.Flashf(kit.LvlOK, "applied and verified ("+kit.Plural(len(p.Edits), "change")+"); restart the agents to take effect; undo: J, then U")
	}
}

// RollbackCommand is the shell command that undoes the last apply to the
// config at path, for whoever has a shell on the node. The path is always
// given, as the console may edit a file the CLI's own search would not
// find (the demo's, a --config elsewhere).
func RollbackCommand(path string) string {
	return "fgtop rollback --config " + shword.Word(path)
}

// undoSpans says how to undo an apply: U in the journal, which an
// operator on SSH, with no shell on the node, has too; the journal's view
// and the help give the command line's way.
func undoSpans() []kit.Span {
	return []kit.Span{{Lvl: kit.LvlDim, Text: "undo: "}, {Lvl: kit.LvlAccent, Text: "J, then U"}}
}

// review rebases a stale draft on the file as it is now (in a command: it
// reads the file) and shows the recomputed plan: the only way out of
// staleness.
func (e *Editor) review() {
	if e.Stale == "" {
		e.Showing, e.planOff = EdPlan, 0
		return
	}
	sess := e.Sess
	e.Do(func() tea.Msg { return DeskReviewedMsg{Sess: sess, Err: sess.Review()} })
}

// reviewed shows the plan recomputed on the file as it is now.
func (e *Editor) reviewed(m DeskReviewedMsg) {
	if !e.Owns(m.Sess) {
		return
	}
	if m.Err != nil {
		e.sessionError(m.Err)
		if e.Lost == "" && !errors.Is(m.Err, partition.ErrStale) {
			// agent.toml does not load (the usual cause: an edit by hand
			// gone wrong): p, which the stale line offers, did nothing
			// and said nothing.
			e.Flashf(kit.LvlCrit, "cannot review: "+e.staleReason(m.Err)+"; the draft stays stale until agent.toml loads again")
		}
		return
	}
	e.Stale, e.staleShut = "", false
	e.Replan()
	// Whose change the plan is now made on: the review said only that it
	// was recomputed, and what changed under the draft was left to find
	// (the tour).
	what := "reviewed: the plan is recomputed on agent.toml as it is now"
	if w := e.jourWrite; !w.Since.IsZero() {
		what += ", " + writeWords(w)
	}
	e.Flashf(kit.LvlInfo, what)
	e.Showing, e.planOff = EdPlan, 0
}

// writeWords says whose write of agent.toml w is, as the review and a
// stale apply dialog's notice say it: "written 14:05:09 by bob; J lists
// it", or "outside fgtop" for a hand fgtop did not see.
func writeWords(w partition.Hold) string {
	did, by := "written", "outside fgtop"
	if w.Rollback {
		did = "rolled back"
	}
	if n := w.Actor.Clean().Name; n != "" {
		by = "by " + n + "; J lists it"
	}
	return did + " " + w.Since.Local().Format("15:04:05") + " " + by
}

// shutStaleApply closes an open apply dialog once the draft goes stale
// under it: the plan it asked to write is no longer what Apply would be
// judged on, and leaving it open until Apply was refused hid that from
// an operator reading it. The draft stays; nothing is written.
func (e *Editor) shutStaleApply() bool {
	if e.dlg == nil || e.dlg.Kind != DlgApply || e.dlg.Closed() {
		return false
	}
	e.dlg.Close()
	e.staleShut = true
	e.staleShutNotice()
	return true
}

// staleShutNotice says why the apply dialog closed: once the desk has
// reported it, the write made since the dialog opened (an earlier one is
// not named: it is not what made the plan stale), else the stale reason.
// Whose write comes first: the footer cuts the rest on a narrow screen,
// and the STALE line above it says how to go on.
func (e *Editor) staleShutNotice() {
	why := e.Stale
	if w := e.jourWrite; !w.Since.IsZero() && w != e.applyWrite {
		// Named once: a later write is not news of the closed dialog.
		why, e.staleShut = "agent.toml "+writeWords(w), false
	}
	e.Flashf(kit.LvlCrit, "apply dialog closed, nothing written: "+why+" · draft kept, p reviews")
}

// journalChanges is what a journal record's plan changed in the file, in
// one line ("agents[0].resource.cpu 15 -> 17; ..."): the hashes alone
// told an operator nothing (the tour). "" where the record keeps no plan
// (a rollback) or one that does not read.
func journalChanges(plan json.RawMessage) string {
	if len(plan) == 0 {
		return ""
	}
	var p struct {
		Edits []agentconfig.Change `json:"edits"`
	}
	if json.Unmarshal(plan, &p) != nil {
		return ""
	}
	parts := make([]string, 0, len(p.Edits))
	for _, c := range p.Edits {
		old, next := strings.TrimSpace(c.Old), strings.TrimSpace(c.New)
		if _, v, ok := strings.Cut(old, "="); ok {
			old = strings.TrimSpace(v)
		}
		if _, v, ok := strings.Cut(next, "="); ok {
			next = strings.TrimSpace(v)
		}
		parts = append(parts, c.Key+" "+old+" -> "+next)
	}
	return strings.Join(parts, "; ")
}

// loadJournal reads the last records of the desk's journal.
func (e *Editor) loadJournal() {
	d := e.Desk
	e.Do(func() tea.Msg {
		v, err := ReadJournal(d)
		return DeskJournalMsg{recs: v.Recs, what: v.What, bad: v.Bad, Err: err}
	})
}

// ReadJournal reads the desk's last journal records (as many as the
// journal view shows) and what each changed: file I/O, for a tea.Cmd.
// The view carries the error's words too.
func ReadJournal(d *partition.Desk) (JournalView, error) {
	recs, bad, err := d.Journal(journalRows)
	v := JournalView{Recs: recs, Bad: bad, Path: d.JournalPath(), What: make([]string, len(recs))}
	for i := range recs {
		v.What[i] = journalChanges(recs[i].Plan)
	}
	if err != nil {
		v.Err = err.Error()
	}
	return v, err
}

// check runs on the clock tick and on the desk's news, and reads
// nothing: a draft goes stale when the desk wrote, or when the engine's
// snapshot carries another hash of agent.toml (it follows the file: an
// edit or a replacement on disk); a newer snapshot re-plans (live
// holders).
func (e *Editor) check() {
	if e.Closed() || e.Lost != "" {
		return
	}
	hash := ""
	if e.Snap != nil {
		hash = e.Snap.ConfigHash
	}
	err := e.Sess.Stale(hash)
	switch {
	case err == nil:
		if e.Stale != "" && strings.Contains(e.Stale, "cannot be used") {
			// The file reads again as the draft was made on (restored
			// byte for byte): the draft stays stale until p, but the
			// reason is no longer that the file cannot be used.
			e.Stale = "agent.toml was changed on disk, then back to the bytes the draft was made on"
			e.Invalidate()
		}
	case errors.Is(err, partition.ErrStale):
		reason := e.staleReason(err)
		was := e.Stale
		e.Stale = reason
		if was == "" && !e.shutStaleApply() {
			e.Flashf(kit.LvlWarn, "the draft is STALE: "+reason+"; p reviews the recomputed plan")
		}
		e.Invalidate()
	default:
		e.lostDraft(err)
	}
	// A snapshot retimed under the same content (every idle second) plans
	// what the last did: no replan, no replay.
	if e.Lost == "" && !e.Snap.SameContent(e.planSnap) {
		e.Replan()
	}
}

// lostDraft says the session no longer holds the draft.
func (e *Editor) lostDraft(err error) {
	e.sessionError(err)
	e.Flashf(kit.LvlCrit, "you no longer hold the draft: "+e.Lost)
	e.Input = nil
	if e.dlg != nil && e.dlg.Kind == DlgApply {
		e.dlg.Close()
	}
}
