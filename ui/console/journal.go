package console

import (
	"cmp"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/kit"
)

// journalMsg is the agent.toml journal read for :journal; reload: read
// anew for a :journal open when another hand wrote.
type journalMsg struct {
	v      editor.JournalView
	reload bool
}

// journalCommand runs :journal: the partition's applies and rollbacks,
// newest first, read off the UI loop. It writes nothing, so a viewer has
// it too: at 3 a.m. who changed the partition is a viewer's question as
// much as an operator's, and the editor's journal view (J) is behind the
// draft an operator must hold.
func (a *App) journalCommand() tea.Cmd {
	d := a.opts.Desk
	if d == nil {
		why := cmp.Or(a.opts.NoJournalWhy, "this console has no agent.toml (start fgtop with --config FILE)")
		a.Flashf(kit.LvlInfo, "no journal: "+why)
		return nil
	}
	return func() tea.Msg {
		v, _ := editor.ReadJournal(d)
		return journalMsg{v: v}
	}
}

// reloadJournal reads the journal anew for a :journal that is open: a
// write by any hand (another operator, the command line) is in it at
// once, as in the editor's journal view.
func (a *App) reloadJournal() {
	if d := a.opts.Desk; d != nil && a.openJournal() != nil {
		a.Do(func() tea.Msg {
			v, _ := editor.ReadJournal(d)
			return journalMsg{v: v, reload: true}
		})
	}
}

// openJournal is the open :journal screen, or nil.
func (a *App) openJournal() *detail {
	for _, l := range a.layers {
		if ds, ok := l.(*detail); ok && ds.Kind == detJournal && !ds.Closed() {
			return ds
		}
	}
	return nil
}

// journalRead shows the journal in a detail screen (esc back), in place
// of one already open; a reload only refreshes one still open, where it
// is scrolled.
func (a *App) journalRead(msg journalMsg) {
	rows := editor.JournalRows(a.St, msg.v)
	lines := make([]detailLine, len(rows))
	for i, r := range rows {
		lines[i] = detailLine{spans: r}
	}
	if msg.reload {
		if ds := a.openJournal(); ds != nil {
			ds.Lines = lines
		}
		return
	}
	for _, l := range a.layers {
		if ds, ok := l.(*detail); ok && ds.Kind == detJournal {
			ds.Close()
		}
	}
	a.prune()
	a.push(&detail{common: a.common, Kind: detJournal, Title: "journal " + msg.v.Path, Lines: lines})
}
