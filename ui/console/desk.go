package console

import (
	"errors"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// deskMsg handles the desk's messages; ok is false for any other. What
// concerns the open editor's session goes to the editor.
func (a *App) deskMsg(msg tea.Msg) bool {
	ed := a.ed()
	switch msg := msg.(type) {
	case editor.DeskPolledMsg:
		a.Desk.Polling = false
		a.deskPolled(msg)
	case editor.DeskOpenedMsg:
		a.Desk.Opening = false
		a.editorOpened(msg)
		a.pollDesk()
	case editor.DeskAppliedMsg:
		if ed != nil && ed.Owns(msg.Sess) {
			ed.Update(msg)
		} else {
			// The editor that started it was left meanwhile.
			editor.FlashApplied(a.Common, msg)
		}
		a.pollDesk()
	case editor.DeskReviewedMsg, editor.DeskJournalMsg, editor.ReplayMsg, editor.DeskUndoPreviewMsg:
		if ed != nil {
			ed.Update(msg)
		}
	case editor.DeskUndoneMsg:
		if ed != nil && ed.Owns(msg.Sess) {
			ed.Update(msg)
		} else {
			editor.FlashUndone(a.Common, msg)
		}
		a.pollDesk()
	case editor.DeskClosedMsg:
		a.pollDesk()
	default:
		return false
	}
	return true
}

// pollDesk asks the desk who holds the draft and what it wrote last, and
// whether this console's session still holds the draft (another process
// may have taken it over); one such command is out at a time. The desk
// reads the draft record at most every half second for all the consoles
// sharing it.
func (a *App) pollDesk() {
	d := a.opts.Desk
	if d == nil || a.Desk.Polling {
		return
	}
	a.Desk.Polling = true
	var sess *partition.Session
	if ed := a.ed(); ed != nil && ed.Lost == "" {
		sess = ed.Sess
	}
	a.Do(func() tea.Msg {
		d.Version() // re-reads the record when the cached copy is old
		m := editor.DeskPolledMsg{Sess: sess}
		m.Hold, m.Held = d.Holder()
		// Any hand's write, not only this desk's: a CLI apply or rollback
		// meanwhile left the header naming an older one (the tour).
		m.Write, m.FileHash, m.Written = d.LatestWriteHash()
		if sess != nil {
			m.Lost = sess.Lost()
			m.Mine = m.Lost == nil && sess.Holds()
		}
		return m
	})
}

// actorWho names an actor in the header: over SSH the user name is the
// client's own choice, so the key it logged in with is named beside it
// ("olga key SHA256:Ab3dE9xQ"), as the journal keeps it.
func actorWho(a agentconfig.Actor) string {
	if a.Key == "" {
		return a.Name
	}
	k := a.Key
	if _, rest, ok := strings.Cut(k, ":"); ok && len(rest) > 8 {
		k = k[:len(k)-len(rest)+8]
	}
	return a.Name + " key " + k
}

// deskPolled shows who holds the draft and the desk's last write in the
// header of every console sharing the desk, and lets the editor notice a
// lost draft.
func (a *App) deskPolled(m editor.DeskPolledMsg) {
	ed := a.ed()
	if m.Written && m.Write != a.jourWrite {
		a.jourWrite = m.Write
		a.reloadJournal()
	}
	var hold, write []kit.Span
	if m.Held {
		lvl, who := kit.LvlWarn, actorWho(m.Hold.Actor)
		if m.Mine && ed != nil && ed.Owns(m.Sess) {
			lvl, who = kit.LvlAccent, "you"
		}
		hold = []kit.Span{{Lvl: lvl, Text: "draft: " + who + " since " + m.Hold.Since.Local().Format("15:04")}}
	}
	// A rollback is named as one even where it left the file the agents
	// run (nothing to restart): else the operator whose apply it undid saw
	// nothing change on their screen (the tour).
	if restarted := a.agentsRestarted(m.FileHash); m.Written && (!restarted || m.Write.Rollback) {
		by := " by " + actorWho(m.Write.Actor)
		if m.Write.Actor.Name == "" {
			by = " outside fgtop"
		}
		did, then, lvl := "written", ": restart agents", kit.LvlWarn
		if m.Write.Rollback {
			did = "rolled back"
		}
		if restarted {
			then, lvl = "", kit.LvlInfo
		}
		write = []kit.Span{{Lvl: lvl, Text: "agent.toml " + did + " " + m.Write.Since.Local().Format("15:04") + by + then}}
	}
	if !slices.Equal(hold, a.deskHold) || !slices.Equal(write, a.deskWrite) {
		a.deskHold, a.deskWrite = hold, write
		a.Invalidate()
	}
	if ed != nil {
		ed.Update(m)
	}
}

// agentsRestarted reports whether every agent is known to run agent.toml
// as it is, hash (restarted since the last write): "restart agents" is
// then old news.
func (a *App) agentsRestarted(hash string) bool {
	if a.Snap == nil || len(a.Snap.Agents) == 0 {
		return false
	}
	for _, ag := range a.Snap.Agents {
		// A state judged on another version (the one before a write the
		// engine has not seen yet) is no news of this one.
		if ag.Restart.State != model.RestartCurrent || hash != "" && ag.Restart.ConfigHash != "" && ag.Restart.ConfigHash != hash {
			return false
		}
	}
	return true
}

// startEditor opens the editor (e). While another operator holds the
// draft it asks, in a dialog whose default is Cancel, whether to take it
// over.
func (a *App) startEditor(takeOver bool) {
	if a.opts.Desk == nil {
		a.Flashf(kit.LvlInfo, "no agent.toml to edit: this console watches scratch roots only (start fgtop with --config FILE to edit the partition)")
		return
	}
	if a.Desk.Opening || a.ed() != nil {
		return
	}
	a.Desk.Opening = true
	d, actor, w := a.opts.Desk, a.Actor, a.Desk
	a.Do(func() tea.Msg {
		// A draft this console gave back a moment ago may still be
		// closing: close it first, or the desk finds it held.
		w.Release()
		sess, err := d.Open(actor, takeOver)
		m := editor.DeskOpenedMsg{Sess: sess, Err: err}
		switch {
		case errors.Is(err, partition.ErrBusy):
			m.Holder, _ = d.Holder()
		case err == nil && !w.Own(sess):
			sess.Close()
			m.Sess, m.Err = nil, partition.ErrClosed
		}
		return m
	})
}

// editorOpened opens the editor on the session the desk lent, or says why
// it did not.
func (a *App) editorOpened(m editor.DeskOpenedMsg) {
	switch {
	case errors.Is(m.Err, partition.ErrBusy):
		a.push(&kit.Dialog{Common: a.Common, Kind: editor.DlgTakeOver, Cancelled: "cancelled: nothing written; the draft stays with its holder", Title: "The partition draft is taken",
			OK: func() tea.Cmd { a.startEditor(true); return nil },
			Body: [][]kit.Span{
				{{Lvl: kit.LvlWarn, Text: m.Holder.String()}, {Lvl: kit.LvlPlain, Text: " is editing the partition."}},
				{},
				{{Lvl: kit.LvlPlain, Text: "Take the draft over? They lose it: their changes that are not applied are gone, and their apply is refused."}},
			},
			OKLabel: "Take over"})
		return
	case m.Err != nil:
		a.Flashf(kit.LvlCrit, "cannot edit the partition: "+editor.FirstLine(m.Err.Error()))
		return
	}
	ed := &editor.Editor{Common: a.Common, Derive: func() *render.Derived { return a.d }, Desk: a.opts.Desk, Work: a.Desk, Sess: m.Sess}
	ed.SetHistory(a.opts.History, a.opts.Records)
	a.push(ed)
	ed.Replan()
	a.Flashf(kit.LvlInfo, editor.OpenedFlash(a.opts.Desk.Path()))
	a.Flash.Short = editor.OpenedFlashShort
}

// Close releases what the console holds outside itself: the partition
// draft, when this console is editing or was opening one, and its read
// of the history record, which it cancels. Call it when
// the program has ended (an SSH session that drops never sends its
// program another message); calling it twice is harmless.
func (a *App) Close() {
	a.clock.stop()
	a.reads.close()
	if ed := a.ed(); ed != nil {
		ed.Close()
	}
	a.prune()
	a.Desk.End()
}
