package ui

import "charm.land/bubbles/v2/key"

// headerHeight is 2 when the device source reports a failure to spell out
// or the first line could not hold everything.
func (a *App) headerHeight() int {
	w, _ := a.size()
	return len(a.viewHeader(w))
}

// layoutNow is the layout for the current size and data.
func (a *App) layoutNow() layout {
	w, h := a.size()
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
	n := len(a.kernels.view.rows)
	if a.kernels.follow && a.kernels.view.dev >= 0 {
		for i := range a.d.devs {
			n = max(n, len(a.d.devs[i].kernels))
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
					ws[c] = lay.panes[p].w
				}
				cols[c] = append(cols[c], a.panes[p].View()...)
			}
		}
		left, right := cols[colLeft], cols[colRight]
		sep := a.st.Border.render(a.st.G.Sep)
		lw, rw := ws[colLeft], ws[colRight]
		for i := 0; i < max(len(left), len(right)); i++ {
			l, r := spaces(lw), spaces(rw)
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
		g := newHistoryPane(a.common, a.hist)
		g.SetSize(lay.graph.w, lay.graph.h)
		g.Select(a.devices.cursor)
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
	if a.flash.text != "" {
		return a.flashLine(w)
	}
	if f := a.footerHelp(w); f != "" {
		return f
	}
	if back := a.kernels.backTo(); back != "" {
		// While a search shows every GPU's kernels, the first thing the
		// footer offers is the way back to the selected one.
		esc := key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to "+back))
		return a.shortHelpFor(append([]key.Binding{esc}, a.keys.ShortHelp()...), w)
	}
	if a.shortHelp == "" || a.helpW != w {
		a.shortHelp, a.helpW = a.shortHelpLine(w), w
	}
	return a.shortHelp
}

// shortHelpLine is the footer's help: the key map's short bindings, as many
// as fit, then an ellipsis. (bubbles' ShortHelpView keeps adding items when
// not even its ellipsis fits, so it can overflow a narrow footer.)
func (a *App) shortHelpLine(w int) string { return a.shortHelpFor(a.keys.ShortHelp(), w) }

// titleRow draws a title row in the console's styles (titleRowOf).
func (a *App) titleRow(w int, title, info []span, total, visible, offset int) string {
	return titleRowOf(a.st, w, title, info, total, visible, offset)
}

// rowStart begins a list row in the console's styles (rowStart).
func (a *App) rowStart(highlighted, marked bool) *line { return rowStart(a.st, highlighted, marked) }

// shortHelpFor is shortHelpLine for any list of bindings.
func (a *App) shortHelpFor(bs []key.Binding, w int) string { return shortHelpOf(a.st, bs, w) }
