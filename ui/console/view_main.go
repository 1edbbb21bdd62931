package console

import (
	"github.com/fgtop/fgtop/ui/kit"
)
import "charm.land/bubbles/v2/key"

// headerHeight is 2 when the device source reports a failure to spell out
// or the first line could not hold everything.
func (a *App) headerHeight() int {
	w, _ := a.Size()
	return len(a.viewHeader(w))
}

// layoutNow is the layout for the current size and data.
func (a *App) layoutNow() layout {
	w, h := a.Size()
	var wants [numPanes]int
	for p, s := range paneSpecs {
		wants[p] = s.want(a)
	}
	return placePanes(w, h, a.headerHeight(), wants, a.focus, a.d != nil && len(a.hist) > 0)
}

// kernelsWant is the rows the kernels pane would like (its column header
// and the kernels). While it follows the device cursor that is the most
// any one device has, so the history graphs below keep their height as
// the cursor moves.
func (a *App) kernelsWant() int {
	if a.d == nil {
		return 0
	}
	n := len(a.Kernels.Showing.Rows)
	if a.Kernels.follow && a.Kernels.Showing.Dev >= 0 {
		for i := range a.d.Devs {
			n = max(n, len(a.d.Devs[i].Kernels))
		}
	}
	return n + 1
}

// viewMain composes header, panes and footer.
func (a *App) viewMain(w, h int) []string {
	rows := make([]string, 0, h)
	rows = append(rows, a.viewHeader(w)...)
	lay := a.sizePanes()
	a.lay = lay
	if !lay.wide {
		rows = append(rows, a.panes[compactTop()].View()...)
		tabs := compactTabs
		shown := tabs[0]
		for _, p := range tabs {
			if lay.visible[p] {
				shown = p
			}
		}
		rows = append(rows, a.panes[shown].viewTitled(a.tabsTitle(shown))...)
	} else {
		var cols [2][]string
		var ws [2]int
		for c := range cols {
			for i, p := range wideCols[c] {
				if i == 0 {
					ws[c] = lay.panes[p].W
				}
				cols[c] = append(cols[c], a.panes[p].View()...)
			}
		}
		left, right := cols[colLeft], cols[colRight]
		sep := a.St.Border.Render(a.St.G.Sep)
		lw, rw := ws[colLeft], ws[colRight]
		for i := 0; i < max(len(left), len(right)); i++ {
			l, r := kit.Spaces(lw), kit.Spaces(rw)
			if i < len(left) {
				l = left[i]
			}
			if i < len(right) {
				r = right[i]
			}
			rows = append(rows, l+sep+r)
		}
	}
	if lay.graphOn {
		g := newHistoryPane(a.common, a.hist, a.recSpan())
		g.geoms = &a.geoms
		g.end = a.graphEnd()
		g.SetSize(lay.graph.W, lay.graph.H)
		g.Select(a.devices.Cursor)
		rows = append(rows, g.View()...)
	}
	for len(rows) < h-1 {
		rows = append(rows, "")
	}
	rows = rows[:h-1]
	return append(rows, a.viewFooter(w))
}

// viewFooter is the prompt while typing, else the flash message, else the
// short help generated from the key map: the screen's own (the editor's)
// or the main screen's.
func (a *App) viewFooter(w int) string {
	if p := find[*prompt](a); p != nil {
		p.SetSize(w, 1)
		return p.View()[0]
	}
	if hs, ok := a.top().(*helpScreen); ok && hs.typing {
		// The help's filter line is a prompt too: a flash does not
		// hide what is typed.
		return hs.Footer(w)
	}
	if a.Flash.Text != "" {
		return a.flashFooter(w)
	}
	if f := a.footerHelp(w); f != "" {
		return f
	}
	if back := a.escBackTo(); back != "" {
		// While a search shows every GPU's kernels, or the screen shows
		// the past, the first thing the footer offers is the way back.
		esc := key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to "+back))
		return a.shortHelpFor(append([]key.Binding{esc}, a.Keys.ShortHelp()...), w)
	}
	if a.shortHelp == "" || a.helpW != w {
		a.shortHelp, a.helpW = a.shortHelpLine(w), w
	}
	return a.shortHelp
}

// escBackTo is where esc on the main screen goes back to, as the footer
// names it: the selected device's kernels during a search, else the live
// node from the past; "" when esc has no such way back.
func (a *App) escBackTo() string {
	if back := a.Kernels.backTo(); back != "" {
		return back
	}
	if a.past.on && a.Kernels.Filter == "" {
		return "live"
	}
	return ""
}

// flashFooter is a flash with the footer's essentials kept at its right
// (kit.FlashFooter): under a dialog its way out and quit; on the main
// screen help and quit, and while a search
// shows every GPU's kernels the way back to the selected one; on a screen
// with its own footer (the editor) what that screen keeps.
func (a *App) flashFooter(w int) string {
	if a.topDialog() != nil {
		// Under a dialog only its keys act: ? and q do nothing there, yet
		// a flash beside one kept "? help • q quit" (the tour).
		return kit.FlashFooter(a.St, a.Flash, []key.Binding{
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
			key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		}, w)
	}
	if f := a.footedScreen(); f != nil {
		return kit.FlashFooter(a.St, a.Flash, f.FooterKeep(), w)
	}
	var keep []key.Binding
	// The past's way back stays out of a flash's footer: the header says
	// PAST, and the flash (a gap in the record) needs the cells.
	if back := a.Kernels.backTo(); back != "" {
		keep = append(keep, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to "+back)))
	}
	return kit.FlashFooter(a.St, a.Flash, append(keep, a.Keys.EssentialIn(ScMain)...), w)
}

// shortHelpLine is the footer's help: the key map's short bindings, as many
// as fit, then an ellipsis. (bubbles' ShortHelpView keeps adding items when
// not even its ellipsis fits, so it can overflow a narrow footer.)
func (a *App) shortHelpLine(w int) string { return a.shortHelpFor(a.Keys.ShortHelp(), w) }

// shortHelpFor is shortHelpLine for any list of bindings.
func (a *App) shortHelpFor(bs []key.Binding, w int) string { return kit.ShortHelpOf(a.St, bs, w) }
