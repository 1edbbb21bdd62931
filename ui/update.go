package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/themes"
)

// Update handles one message. A snapshot is adopted at most once per
// frame: the first after a quiet frame at once, a burst's newest at the
// frame's end, so a burst costs one derivation and one composition per
// frame, not one per snapshot.
//
// Update reads and writes no file: the desk's work (open, apply, review,
// journal, close, who holds the draft) and theme loading run as commands
// and come back as messages (editor_cmds.go).
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := a.update(msg)
	// What the components sent on the bus (and, in tests, the desk's
	// answers) is handled before Update returns.
	for len(a.outbox) > 0 {
		next := a.outbox[0]
		a.outbox = a.outbox[1:]
		_, c := a.update(next)
		cmd = tea.Batch(cmd, c)
	}
	a.prune()
	return m, a.takeLater(cmd)
}

// takeLater returns cmd with the commands Update's helpers asked for.
func (a *App) takeLater(cmd tea.Cmd) tea.Cmd {
	if len(a.later) > 0 {
		cmd = tea.Batch(append(a.later, cmd)...)
		a.later = nil
	}
	return cmd
}

func (a *App) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if a.deskMsg(msg) {
		return a, nil
	}
	if cmd, ok := a.busMsg(msg); ok {
		return a, cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.width, a.height = msg.Width, msg.Height
		a.clampCursors()
		a.invalidate()
	case snapshotMsg:
		cmds := []tea.Cmd{a.listen()}
		// The first snapshot after a quiet frame is adopted at once (a
		// file write reaches the screen a frame sooner); those that follow
		// within the frame wait for its end, and only the newest counts.
		since := a.now().Sub(a.adoptedAt)
		if !a.frameArmed && since >= frameInterval {
			a.pending = nil
			a.adoptNow(msg.snap)
			return a, tea.Batch(cmds...)
		}
		a.pending = msg.snap
		if !a.frameArmed {
			a.frameArmed = true
			cmds = append(cmds, frame(min(frameInterval, frameInterval-since)))
		}
		return a, tea.Batch(cmds...)
	case frameMsg:
		a.frameArmed = false
		if s := a.pending; s != nil {
			a.pending = nil
			a.adoptNow(s)
		}
	case themeLoadedMsg:
		a.themeLoaded(msg)
		a.invalidate()
	case closedMsg:
		a.closed = true
		a.flashf(lvlCrit, "the engine stopped publishing: this is the last snapshot it sent")
	case tickMsg:
		a.expireFlash()
		a.invalidate()   // ages and "updated ... ago" move on
		a.broadcast(msg) // the editor checks its draft against the snapshot
		a.pollDesk()
		return a, tick()
	case tea.EnvMsg:
		if !a.theme.explicit && themes.NoColor(msg.Getenv) {
			a.theme.noColor = true
			_ = a.setTheme(themes.MustBuiltin(themes.Mono))
		}
	case tea.BackgroundColorMsg:
		if !a.theme.explicit && !a.theme.noColor && a.opts.Background == "" && msg.IsDark() != a.theme.dark {
			a.theme.dark = msg.IsDark()
			_ = a.setTheme(themes.Auto(a.theme.dark))
		}
	case tea.KeyPressMsg:
		return a.handleKey(msg)
	case tea.MouseWheelMsg:
		a.handleWheel(msg.Mouse())
	case tea.MouseClickMsg:
		a.handleClick(msg.Mouse())
	}
	return a, nil
}

func (a *App) handleKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	// The prompt, a dialog, the editor, the help or a detail: the top
	// layer has the keys.
	if cmd, ok := a.route(msg); ok {
		return a, cmd
	}
	act := a.keys.lookup(msg)
	if act == actQuit {
		return a, a.quit()
	}
	a.invalidate()
	switch act {
	case actHelp:
		a.openHelp()
	case actFilter:
		a.startPrompt(promptFilter, a.filter)
	case actCommand:
		a.startPrompt(promptCommand, "")
	case actBack:
		switch {
		case a.filter != "":
			a.filter = ""
			a.refreshKernels()
		case a.flash.text != "":
			a.flash = flash{}
		}
	case actNextPane:
		a.focus = (a.focus + 1) % numPanes
	case actPrevPane:
		a.focus = (a.focus + numPanes - 1) % numPanes
	case actUp:
		a.moveCursor(-1)
	case actDown:
		a.moveCursor(1)
	case actTop:
		a.moveCursor(-1 << 30)
	case actBottom:
		a.moveCursor(1 << 30)
	case actPageUp:
		a.moveCursor(-max(a.visibleRows(a.focus)-1, 1))
	case actPageDown:
		a.moveCursor(max(a.visibleRows(a.focus)-1, 1))
	case actDetail:
		a.openDetail()
	case actSegments:
		a.segByAgent = !a.segByAgent
	case actFollow:
		a.follow = !a.follow
		a.refreshKernels()
	case actSort:
		a.cycleSort()
	case actSortReverse:
		a.sortDesc = !a.sortDesc
		a.refreshKernels()
	case actCopy:
		return a, a.copySelected()
	case actEditPartition:
		a.startEditor(false)
	}
	return a, nil
}

// scroll moves a scrolling screen (help, detail, the editor's plan and
// journal) by a key's action.
func (c *common) scroll(off *int, act action) {
	_, h := c.size()
	page := max(h-4, 1)
	switch act {
	case actUp:
		*off--
	case actDown:
		*off++
	case actPageUp:
		*off -= page
	case actPageDown:
		*off += page
	case actTop:
		*off = 0
	case actBottom:
		*off = 1 << 30 // clamped when drawn
	}
	*off = max(*off, 0)
}

// count is how many rows the pane's cursor moves over.
func (a *App) count(p pane) int {
	if a.d == nil {
		return 0
	}
	switch p {
	case paneDevices:
		return len(a.d.devs) + 1 // + the cpu/mem line
	case paneKernels:
		return len(a.kview.rows)
	case paneAgents:
		return len(a.d.agents)
	}
	return len(a.d.issues)
}

// visibleRows is how many of the pane's rows fit.
func (a *App) visibleRows(p pane) int {
	r := a.layoutNow().panes[p]
	switch p {
	case paneDevices, paneKernels:
		return max(r.h-2, 1)
	case paneAgents:
		return a.agentsFitting(r.h - 1)
	}
	return max(r.h-1, 1)
}

func (a *App) moveCursor(delta int) {
	p := a.focus
	n := a.count(p)
	if n == 0 {
		return
	}
	c := min(max(a.cursor[p]+delta, 0), n-1)
	if c == a.cursor[p] {
		return
	}
	a.cursor[p] = c
	a.ensureVisible(p)
	if p == paneDevices {
		a.refreshKernels()
	}
}

// ensureVisible scrolls a pane so its cursor row shows.
func (a *App) ensureVisible(p pane) {
	n := a.count(p)
	c := a.cursor[p]
	off := a.offset[p]
	if c < off {
		off = c
	}
	if p == paneAgents {
		// Blocks of several lines: scroll until the cursor's block fits.
		r := a.layoutNow().panes[p]
		for off < c {
			used := 0
			for i := off; i <= c; i++ {
				used += agentLines(&a.d.agents[i])
			}
			if used <= r.h-1 {
				break
			}
			off++
		}
	} else if vis := a.visibleRows(p); c >= off+vis {
		off = c - vis + 1
	}
	a.offset[p] = min(max(off, 0), max(n-1, 0))
}

// clampCursors keeps cursors and offsets within the rows a new snapshot
// or size leaves.
func (a *App) clampCursors() {
	for p := range numPanes {
		n := a.count(p)
		a.cursor[p] = min(a.cursor[p], max(n-1, 0))
		if p == paneAgents {
			a.offset[p] = min(a.offset[p], a.cursor[p])
		} else {
			a.offset[p] = min(a.offset[p], max(n-a.visibleRows(p), 0))
		}
		a.ensureVisible(p)
	}
}

func (a *App) handleWheel(m tea.Mouse) {
	if _, ok := a.route(tea.MouseWheelMsg(m)); ok {
		return
	}
	delta := wheelDelta(m)
	p, ok := a.lay.paneAt(m.X, m.Y)
	if !ok {
		return
	}
	focus := a.focus
	a.focus = p
	a.moveCursor(delta)
	a.focus = focus
	a.invalidate()
}

// handleClick focuses the pane under the pointer and selects the row, or
// sorts by the kernel column whose header was clicked.
func (a *App) handleClick(m tea.Mouse) {
	if m.Button != tea.MouseLeft || a.modalOpen() {
		return
	}
	p, ok := a.lay.paneAt(m.X, m.Y)
	if !ok {
		return
	}
	a.focus = p
	a.invalidate()
	r := a.lay.panes[p]
	row := m.Y - r.y
	switch p {
	case paneDevices, paneKernels:
		if row == 1 && p == paneKernels {
			for _, c := range a.kcols {
				if x := m.X - r.x; x >= c.x && x < c.x+c.w {
					a.setSort(c.key, c.key == a.sortCol && !a.sortDesc)
				}
			}
			return
		}
		row -= 2
	case paneAgents:
		row--
		if row >= 0 && a.d != nil {
			// Map a line to the agent block it belongs to.
			for i := a.offset[p]; i < len(a.d.agents); i++ {
				n := agentLines(&a.d.agents[i])
				if row < n {
					a.selectRow(p, i)
					return
				}
				row -= n
			}
		}
		return
	default:
		row--
	}
	if row >= 0 {
		a.selectRow(p, a.offset[p]+row)
	}
}

func (a *App) selectRow(p pane, i int) {
	if i < 0 || i >= a.count(p) {
		return
	}
	a.cursor[p] = i
	a.ensureVisible(p)
	if p == paneDevices {
		a.refreshKernels()
	}
}

// wheelDelta is a wheel event as rows: -1 up, 1 down.
func wheelDelta(m tea.Mouse) int {
	if m.Button == tea.MouseWheelUp {
		return -1
	}
	return 1
}
