package editor

import (
	"errors"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/ui/kit"
)

// askRollback starts U in the journal: what undoing the last apply would
// do is read off the UI loop (the journal, the backup, the file, judged
// against the live kernels as `fgtop rollback` judges them), then asked in
// a dialog whose default is Cancel (undoPreviewed). An operator on SSH
// has no shell to run `fgtop rollback` in: this is their way back.
func (e *Editor) askRollback() {
	switch {
	case e.Lost != "":
		e.Flashf(kit.LvlCrit, "not rolled back: "+e.Lost)
		return
	case e.Applying:
		e.Flashf(kit.LvlWarn, "a write is in progress: wait for its result")
		return
	case e.Dirty():
		// The draft's edits were made on the file the rollback replaces.
		e.Flashf(kit.LvlWarn, "the draft has changes not applied ("+e.changeSummary()+"): r resets it, then U undoes the last apply")
		return
	}
	sess := e.Sess
	e.Do(func() tea.Msg {
		pv, err := sess.PreviewRollback()
		return DeskUndoPreviewMsg{Sess: sess, Preview: pv, Err: err}
	})
}

// undoPreviewed opens the rollback dialog, or says why there is nothing
// the console may undo.
func (e *Editor) undoPreviewed(m DeskUndoPreviewMsg) {
	pv := m.Preview
	if m.Err != nil {
		// What the last U said is over: this answer replaces it.
		e.undoNote = nil
		e.Invalidate()
		e.sessionError(m.Err)
		if errors.Is(m.Err, agentconfig.ErrChangedOnDisk) {
			// The desk does not force; the command line's --force does,
			// keeping the changed file in a backup.
			e.undoNote = [][]kit.Span{{{Lvl: kit.LvlCrit, Text: "not rolled back: " + FirstLine(m.Err.Error())}},
				{{Lvl: kit.LvlDim, Text: "on the node, " + RollbackCommand(e.Desk.Path()) + " --force restores it anyway (the current file is backed up first)"}}}
			e.Flashf(kit.LvlCrit, "not rolled back: "+FirstLine(m.Err.Error()))
			e.Invalidate()
			return
		}
		if errors.Is(m.Err, agentconfig.ErrNothingToRollBack) {
			// Its words begin "nothing to roll back": not said twice.
			e.Flashf(kit.LvlWarn, FirstLine(m.Err.Error()))
			return
		}
		e.Flashf(kit.LvlCrit, "nothing rolled back: "+FirstLine(m.Err.Error()))
		return
	}
	if r := pv.Judgement.Refusal; r != "" {
		// The console does not force: what it would strand is listed, and
		// the ways on are the editor (its own typed confirmation) or the
		// command line's --force.
		e.undoNote = [][]kit.Span{{{Lvl: kit.LvlCrit, Text: "not rolled back: " + consoleRefusal(r)}}}
		for _, a := range pv.Judgement.Affected {
			e.undoNote = append(e.undoNote, []kit.Span{{Lvl: kit.LvlWarn, Text: "  " + a}})
		}
		// The command on a row of its own: whole, to paste in a shell.
		e.undoNote = append(e.undoNote, []kit.Span{{Lvl: kit.LvlDim, Text: "edit the amounts back in the editor (its apply asks you to confirm such kernels), or on the node:"}},
			[]kit.Span{{Lvl: kit.LvlAccent, Text: "  " + RollbackCommand(e.Desk.Path()) + " --force"}})
		e.Flashf(kit.LvlCrit, "not rolled back: "+FirstLine(consoleRefusal(r)))
		e.Invalidate()
		return
	}
	e.undoNote = nil
	top := pv.Undoes
	to := " " + e.St.G.To + " "
	d := &kit.Dialog{Kind: DlgRollback, Title: "Undo the last apply", OKLabel: "Roll back", Cancelled: "cancelled: nothing written",
		More: "esc: the journal lists that apply"}
	d.OK = func() tea.Cmd {
		if !e.Closed() {
			e.doRollback(pv)
		}
		return nil
	}
	d.Body = append(d.Body,
		[]kit.Span{{Lvl: kit.LvlPlain, Text: "Restore " + filepath.Base(e.Desk.Path()) + " as it was before the apply of " + top.Time.Local().Format("2006-01-02 15:04:05") + " by " + top.Actor + "?"}},
		[]kit.Span{{Lvl: kit.LvlDim, Text: "  file: "}, {Lvl: kit.LvlAccent, Text: e.Desk.Path()}},
		[]kit.Span{{Lvl: kit.LvlDim, Text: "  " + ShortHash(top.NewHash) + to + ShortHash(top.OldHash) + ", from the backup " + top.Backup}})
	if what := journalChanges(top.Plan); what != "" {
		d.Body = append(d.Body, []kit.Span{{Lvl: kit.LvlPlain, Text: "  that apply changed: "}, {Lvl: kit.LvlDim, Text: strings.ReplaceAll(what, " -> ", to)}})
	}
	var warns []string
	if pv.Verdict != "" {
		warns = append(warns, pv.Verdict)
	}
	warns = append(warns, pv.Judgement.Warnings...)
	if pv.JournalWarning != "" {
		warns = append(warns, pv.JournalWarning)
	}
	if len(warns) > 0 {
		d.Body = append(d.Body, []kit.Span{}, []kit.Span{{Lvl: kit.LvlWarn, Text: "Warnings:"}})
		for _, w := range warns {
			d.Body = append(d.Body, []kit.Span{{Lvl: kit.LvlWarn, Text: "  " + FirstLine(w)}})
		}
	}
	// Not a bare "restart them afterwards": a rollback to the version the
	// agents started with needs none, and the outcome then says so.
	d.Foot = append(d.Foot, []kit.Span{}, []kit.Span{{Lvl: kit.LvlDim, Text: "The agents read agent.toml only at start-up: restart them afterwards, unless the outcome says they run the restored version already."}})
	e.openDialog(d)
}

// consoleRefusal is a rollback refusal in the console's words: the
// command line's --force is not the console's.
func consoleRefusal(r string) string {
	r = strings.Replace(r, " (--force rolls back anyway)", "", 1)
	return strings.Replace(r, "; --force rolls back anyway (the current file is backed up first)", "", 1)
}

// doRollback makes the rollback the dialog confirmed, off the UI loop;
// the desk checks again that the apply shown is still the last one and
// that no live kernel would now be affected.
func (e *Editor) doRollback(pv *partition.RollbackPreview) {
	if e.Applying {
		e.Flashf(kit.LvlWarn, "a write is in progress: wait for its result")
		return
	}
	e.Applying = true
	e.undoNote = [][]kit.Span{{{Lvl: kit.LvlWarn, Text: "rolling back: writing " + filepath.Base(e.Desk.Path()) + "…"}}}
	e.Invalidate()
	sess, seen := e.Sess, pv.Undoes
	e.Do(func() tea.Msg {
		res, err := sess.UndoApply(seen)
		return DeskUndoneMsg{Sess: sess, res: res, Err: err}
	})
}

// undone reports the outcome of this editor's rollback.
func (e *Editor) undone(m DeskUndoneMsg) {
	e.Applying = false
	switch {
	case m.res == nil:
		e.sessionError(m.Err)
		e.undoNote = [][]kit.Span{{{Lvl: kit.LvlCrit, Text: "not rolled back: " + FirstLine(consoleRefusal(m.Err.Error()))}}}
		if errors.Is(m.Err, partition.ErrLiveKernels) {
			e.undoNote = append(e.undoNote, []kit.Span{{Lvl: kit.LvlDim, Text: "live kernels started since it was shown: U shows what they are"}})
		}
	case m.Err != nil || len(m.res.Mismatch) > 0:
		e.undoNote = [][]kit.Span{{{Lvl: kit.LvlCrit, Text: "restored, but: " + undoProblem(m)}}}
	default:
		e.wrote = m.res.NewHash
		e.undoNote = [][]kit.Span{{{Lvl: kit.LvlOK, Text: "rolled back " + e.Now().Format("15:04:05") + ": " + filepath.Base(m.res.Path) + " restored"},
			restartMark, {Lvl: kit.LvlDim, Text: " · the version replaced: " + m.res.Backup}}}
	}
	FlashUndone(e.Common, m)
	e.loadJournal()
	if m.res == nil {
		return
	}
	// The session's base is the restored file.
	e.Req, e.undo = partition.Request{}, nil
	e.result = nil
	e.Replan()
}

// FlashUndone says a rollback's outcome in the flash line.
func FlashUndone(c *kit.Common, m DeskUndoneMsg) {
	switch {
	case m.res == nil:
		c.Flashf(kit.LvlCrit, "not rolled back: "+FirstLine(consoleRefusal(m.Err.Error())))
	case m.Err != nil || len(m.res.Mismatch) > 0:
		c.Flashf(kit.LvlCrit, "restored, but: "+undoProblem(m))
	default:
		// The condition first: an 80-column flash line is cut after some
		// 55 characters, and "restart the agents wher…" read as an order
		// beside an outcome saying no restart is needed.
		c.Flashf(kit.LvlOK, "rolled back: "+filepath.Base(m.res.Path)+" restored; if the header says restart pending, restart the agents")
	}
}

// undoProblem is what went wrong with a rollback that wrote the file.
func undoProblem(m DeskUndoneMsg) string {
	if m.Err != nil {
		return FirstLine(m.Err.Error())
	}
	return strings.Join(m.res.Mismatch, "; ")
}
