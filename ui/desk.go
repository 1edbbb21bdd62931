package ui

import (
	"errors"
	"slices"

	tea "charm.land/bubbletea/v2"
	"github.com/fgtop/fgtop/engine/partition"
)

// deskMsg handles the desk's messages; ok is false for any other. What
// concerns the open editor's session goes to the editor.
func (a *App) deskMsg(msg tea.Msg) bool {
	ed := a.ed()
	switch msg := msg.(type) {
	case deskPolledMsg:
		a.desk.polling = false
		a.deskPolled(msg)
	case deskOpenedMsg:
		a.desk.opening = false
		a.editorOpened(msg)
		a.pollDesk()
	case deskAppliedMsg:
		if ed != nil && ed.owns(msg.sess) {
			ed.Update(msg)
		} else {
			// The editor that started it was left meanwhile.
			flashApplied(a.kitCommon, msg)
		}
		a.pollDesk()
	case deskReviewedMsg, deskJournalMsg:
		if ed != nil {
			ed.Update(msg)
		}
	case deskClosedMsg:
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
	if d == nil || a.desk.polling {
		return
	}
	a.desk.polling = true
	var sess *partition.Session
	if ed := a.ed(); ed != nil && ed.lost == "" {
		sess = ed.sess
	}
	a.do(func() tea.Msg {
		d.Version() // re-reads the record when the cached copy is old
		m := deskPolledMsg{sess: sess}
		m.hold, m.held = d.Holder()
		m.write, m.written = d.LastWrite()
		if sess != nil {
			m.lost = sess.Lost()
			m.mine = m.lost == nil && sess.Holds()
		}
		return m
	})
}

// deskPolled shows who holds the draft and the desk's last write in the
// header of every console sharing the desk, and lets the editor notice a
// lost draft.
func (a *App) deskPolled(m deskPolledMsg) {
	ed := a.ed()
	var hold, write []span
	if m.held {
		lvl, who := lvlWarn, m.hold.Actor.Name
		if m.mine && ed != nil && ed.owns(m.sess) {
			lvl, who = lvlAccent, "you"
		}
		hold = []span{{lvl, "draft: " + who + " since " + m.hold.Since.Local().Format("15:04")}}
	}
	if m.written {
		write = []span{{lvlWarn, "agent.toml written " + m.write.Since.Local().Format("15:04") + " by " + m.write.Actor.Name + ": restart agents"}}
	}
	if !slices.Equal(hold, a.deskHold) || !slices.Equal(write, a.deskWrite) {
		a.deskHold, a.deskWrite = hold, write
		a.invalidate()
	}
	if ed != nil {
		ed.Update(m)
	}
}

// startEditor opens the editor (e). While another operator holds the
// draft it asks, in a dialog whose default is Cancel, whether to take it
// over.
func (a *App) startEditor(takeOver bool) {
	if a.opts.Desk == nil {
		a.flashf(lvlInfo, "no agent.toml to edit: this console watches scratch roots only (start fgtop with --config FILE to edit the partition)")
		return
	}
	if a.desk.opening || a.ed() != nil {
		return
	}
	a.desk.opening = true
	d, actor, w := a.opts.Desk, a.actor, a.desk
	a.do(func() tea.Msg {
		// A draft this console gave back a moment ago may still be
		// closing: close it first, or the desk finds it held.
		w.release()
		sess, err := d.Open(actor, takeOver)
		m := deskOpenedMsg{sess: sess, err: err}
		switch {
		case errors.Is(err, partition.ErrBusy):
			m.holder, _ = d.Holder()
		case err == nil && !w.own(sess):
			sess.Close()
			m.sess, m.err = nil, partition.ErrClosed
		}
		return m
	})
}

// editorOpened opens the editor on the session the desk lent, or says why
// it did not.
func (a *App) editorOpened(m deskOpenedMsg) {
	switch {
	case errors.Is(m.err, partition.ErrBusy):
		a.push(&dialog{kitCommon: a.kitCommon, kind: dlgTakeOver, title: "The partition draft is taken",
			ok: func() tea.Cmd { a.startEditor(true); return nil },
			body: [][]span{
				{{lvlWarn, m.holder.String()}, {lvlPlain, " is editing the partition."}},
				{},
				{{lvlPlain, "Take the draft over? They lose it: their changes that are not applied are gone, and their apply is refused."}},
			},
			okLabel: "Take over"})
		return
	case m.err != nil:
		a.flashf(lvlCrit, "cannot edit the partition: "+firstLine(m.err.Error()))
		return
	}
	ed := &editor{kitCommon: a.kitCommon, derive: func() *derived { return a.d }, desk: a.opts.Desk, work: a.desk, sess: m.sess}
	a.push(ed)
	ed.replan()
	a.flashf(lvlInfo, "editing "+a.opts.Desk.Path()+": the draft is yours until you leave (esc)")
}

// Close releases what the console holds outside itself: the partition
// draft, when this console is editing or was opening one. Call it when
// the program has ended (an SSH session that drops never sends its
// program another message); calling it twice is harmless.
func (a *App) Close() {
	if ed := a.ed(); ed != nil {
		ed.close()
	}
	a.prune()
	a.desk.end()
}
