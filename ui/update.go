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

func (a *App) handleWheel(m tea.Mouse) {
	if _, ok := a.route(tea.MouseWheelMsg(m)); ok {
		return
	}
	a.paneMouse(tea.MouseWheelMsg(m), m)
}

// handleClick focuses the pane under the pointer and gives it the click.
func (a *App) handleClick(m tea.Mouse) {
	if m.Button != tea.MouseLeft || a.modalOpen() {
		return
	}
	a.paneMouse(tea.MouseClickMsg(m), m)
}
