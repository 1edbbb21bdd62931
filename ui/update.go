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
	for len(a.desk.ready) > 0 {
		next := a.desk.ready[0]
		a.desk.ready = a.desk.ready[1:]
		_, c := a.update(next)
		cmd = tea.Batch(cmd, c)
	}
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
		a.invalidate() // ages and "updated ... ago" move on
		a.checkEditor()
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
	if a.prompt != promptNone {
		return a, a.handlePromptKey(msg)
	}
	if a.dlg != nil {
		return a.handleDialogKey(msg)
	}
	if a.ed != nil && a.overlay == ovNone {
		return a.handleEditorKey(msg)
	}
	if a.overlay == ovHelp && a.helpFilterKey(msg) {
		a.invalidate()
		return a, nil
	}
	// Over the editor, the help screen takes the editor's keys: q there is
	// a letter, not quit, as in the editor itself.
	sc := scMain
	if a.ed != nil {
		sc = a.helpScope()
	}
	act := a.keys.lookupIn(sc, msg)
	if act == actQuit {
		return a, a.quit()
	}
	a.invalidate()
	switch a.overlay {
	case ovHelp:
		switch act {
		case actHelp, actBack:
			a.overlay = ovNone
		default:
			a.scrollOverlay(&a.helpOff, act)
		}
		return a, nil
	case ovDetail:
		switch act {
		case actBack, actDetail:
			a.overlay = ovNone
		case actHelp:
			a.overlay = ovHelp
		default:
			a.scrollOverlay(&a.detail.off, act)
		}
		return a, nil
	}
	switch act {
	case actHelp:
		a.overlay, a.helpOff, a.helpFilter = ovHelp, 0, ""
	case actFilter:
		a.startPrompt(promptFilter, a.kernels.filter)
	case actCommand:
		a.startPrompt(promptCommand, "")
	case actBack:
		switch {
		case a.kernels.filter != "":
			a.kernels.setFilter("")
		case a.flash.text != "":
			a.flash = flash{}
		}
	case actNextPane:
		a.setFocusPane((a.focus + 1) % numPanes)
	case actPrevPane:
		a.setFocusPane((a.focus + numPanes - 1) % numPanes)
	case actDetail:
		a.openDetail()
	case actCopy:
		return a, a.copySelected()
	case actEditPartition:
		a.startEditor(false)
	default:
		return a, a.paneKey(act, msg)
	}
	return a, nil
}

// scrollOverlay moves a help or detail screen.
func (a *App) scrollOverlay(off *int, act action) {
	_, h := a.size()
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

func (a *App) handleWheel(m tea.Mouse) {
	delta := 1
	if m.Button == tea.MouseWheelUp {
		delta = -1
	}
	switch a.overlay {
	case ovHelp:
		a.helpOff = max(a.helpOff+delta, 0)
		a.invalidate()
		return
	case ovDetail:
		a.detail.off = max(a.detail.off+delta, 0)
		a.invalidate()
		return
	}
	if a.dlg != nil {
		return
	}
	if ed := a.ed; ed != nil {
		switch ed.view {
		case edPlan:
			ed.planOff = max(ed.planOff+delta, 0)
		case edJournal:
			ed.jourOff = max(ed.jourOff+delta, 0)
		default:
			if ed.input == nil {
				a.moveEdCursor(delta)
			}
		}
		a.invalidate()
		return
	}
	a.paneMouse(tea.MouseWheelMsg(m), m)
}

// handleClick focuses the pane under the pointer and gives it the click.
func (a *App) handleClick(m tea.Mouse) {
	if m.Button != tea.MouseLeft || a.overlay != ovNone || a.prompt != promptNone || a.ed != nil || a.dlg != nil {
		return
	}
	a.paneMouse(tea.MouseClickMsg(m), m)
}
