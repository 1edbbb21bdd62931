package ui

// headerHeight is 2 when the device source reports a failure to spell out
// or the first line could not hold everything.
func (a *App) headerHeight() int {
	w, _ := a.size()
	return len(a.viewHeader(w))
}

// layoutNow is the layout for the current size and data.
func (a *App) layoutNow() layout {
	w, h := a.size()
	devLines, agLines := 2, 1
	var fill fillWants
	if a.d != nil {
		devLines = len(a.d.devs) + 2
		agLines = 0
		for i := range a.d.agents {
			agLines += agentLines(&a.d.agents[i])
		}
		fill = fillWants{kernLines: a.kernelsWant(), issueLines: len(a.d.issues), graphs: len(a.hist) > 0}
	}
	return computeLayout(w, h, a.headerHeight(), devLines, agLines, a.focus, fill)
}

// kernelsWant is the rows the kernels pane would like (its column header
// and the kernels). While it follows the device cursor that is the most
// any one device has, so the history graphs below keep their height as
// the cursor moves.
func (a *App) kernelsWant() int {
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
		rows = append(rows, a.panes[paneDevices].View()...)
		shown := paneKernels
		for p := paneKernels; p < numPanes; p++ {
			if lay.visible[p] {
				shown = p
			}
		}
		rows = append(rows, a.panes[shown].viewTitled(a.tabsTitle(shown))...)
	} else {
		left := append(a.panes[paneDevices].View(), a.panes[paneKernels].View()...)
		right := append(a.panes[paneAgents].View(), a.panes[paneIssues].View()...)
		sep := a.st.Border.render(a.st.G.Sep)
		lw, rw := lay.panes[paneDevices].w, lay.panes[paneAgents].w
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
