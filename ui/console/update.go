package console

import (
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/fgtop/fgtop/themes"

	"github.com/fgtop/fgtop/ui/kit"
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
	a.noteShared(msg)
	m, cmd := a.update(msg)
	// What the components sent on the bus (and, in tests, the desk's
	// answers) is handled before Update returns.
	for len(a.Outbox) > 0 {
		next := a.Outbox[0]
		a.Outbox = a.Outbox[1:]
		_, c := a.update(next)
		cmd = tea.Batch(cmd, c)
	}
	a.prune()
	return m, a.takeLater(cmd)
}

// takeLater returns cmd with the commands Update's helpers asked for.
func (a *App) takeLater(cmd tea.Cmd) tea.Cmd {
	if len(a.Later) > 0 {
		cmd = tea.Batch(append(a.Later, cmd)...)
		a.Later = nil
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
	if a.graphUpdate(msg) {
		return a, nil
	}
	if cmd, ok := a.pastUpdate(msg); ok {
		return a, cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.Width, a.Height = msg.Width, msg.Height
		a.clampCursors()
		a.Invalidate()
	case SnapshotMsg:
		cmds := []tea.Cmd{a.listen()}
		// The first snapshot after a quiet frame is adopted at once (a
		// file write reaches the screen a frame sooner); those that follow
		// within the frame wait for its end, and only the newest counts.
		since := a.Now().Sub(a.adoptedAt)
		if !a.frameArmed && since >= frameInterval {
			a.pending = nil
			a.adoptNow(msg.Snap)
			return a, tea.Batch(cmds...)
		}
		a.pending = msg.Snap
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
		a.Invalidate()
	case journalMsg:
		a.journalRead(msg)
		a.Invalidate()
	case fitMsg:
		a.fitAnswered(msg)
		a.Invalidate()
	case demoRestartedMsg:
		if msg.err != nil {
			a.Flashf(kit.LvlCrit, msg.err.Error())
		} else {
			a.Flashf(kit.LvlInfo, msg.text)
		}
		a.Invalidate()
	case closedMsg:
		a.Closed = true
		a.Flashf(kit.LvlCrit, "the engine stopped publishing: this is the last snapshot it sent")
	case clockMsg:
		a.tickWork(a.Now())
		return a, a.clock.wait()
	case kit.TickMsg:
		// A tick from elsewhere (tests): the clock's work, the clock
		// left waiting.
		a.tickWork(a.Now())
	case tea.EnvMsg:
		if !a.theme.explicit && themes.NoColor(msg.Getenv) {
			a.theme.noColor = true
			_ = a.setTheme(themes.MustBuiltin(themes.Mono))
		}
	case tea.ColorProfileMsg:
		// A terminal the frames reach without colour (TERM=dumb: no
		// attributes either) gets the mono theme, as NO_COLOR does: its
		// kernels differ in shape and over-capacity shows as ×, which
		// colours alone would have lost.
		if !a.theme.explicit && !a.theme.noColor && (msg.Profile == colorprofile.NoTTY || msg.Profile == colorprofile.ASCII) {
			a.theme.noColor = true
			_ = a.setTheme(themes.MustBuiltin(themes.Mono))
		}
	case tea.BackgroundColorMsg:
		if !a.theme.explicit && !a.theme.noColor && a.opts.Background == "" && msg.IsDark() != a.theme.dark {
			a.theme.dark = msg.IsDark()
			_ = a.setTheme(themes.Auto(a.theme.dark))
		}
	case tea.KeyPressMsg:
		a.startPicked = true // the operator moves the cursor from now on
		return a.handleKey(msg)
	case tea.MouseWheelMsg:
		a.startPicked = true
		a.handleWheel(msg.Mouse())
	case tea.MouseClickMsg:
		a.startPicked = true
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
	act := a.Keys.Lookup(msg)
	if act == kit.ActQuit {
		return a, a.Quit()
	}
	a.Invalidate()
	if act == kit.ActNone && !a.Keys.Role().CanWrite() {
		if why, short := viewerRefusal(msg, a.opts.DemoRestart != nil); why != "" {
			a.Flashf(kit.LvlInfo, why)
			a.Flash.Short = short
			return a, nil
		}
	}
	if cmd, ok := a.pastKey(act, msg); ok {
		return a, cmd
	}
	switch act {
	case kit.ActHelp:
		a.openHelp()
	case kit.ActFilter:
		var back func()
		if from := a.focus; from == paneAgents || from == paneIssues {
			// The filter is the kernels': typed over the Issues or
			// Agents tab, its result and its hints were out of sight
			// (the tour). The Devices pane stays: it marks the hits.
			// Esc, which gives the old filter back, gives the pane back.
			a.setFocusPane(paneKernels)
			back = func() { a.setFocusPane(from) }
		}
		a.startPrompt(PromptFilter, FilterToExtend(a.Kernels.Filter), back)
	case kit.ActCommand:
		a.startPrompt(PromptCommand, "", nil)
	case kit.ActBack:
		switch {
		case a.Kernels.Filter != "":
			a.Kernels.setFilter("")
		case a.past.on:
			// The past is left as a search is (the tour: esc did nothing
			// there, and only :live, which the footer never named, came
			// back).
			a.goLive()
		case a.Flash.Text != "":
			a.Flash = kit.Flash{}
		}
	case ActNextPane:
		a.setFocusPane((a.focus + 1) % numPanes)
	case ActPrevPane:
		a.setFocusPane((a.focus + numPanes - 1) % numPanes)
	case kit.ActDetail:
		a.openDetail()
	case ActCopy:
		return a, a.copySelected()
	case ActEditPartition:
		a.startEditor(false)
	case ActDemoRestart:
		restart := a.opts.DemoRestart
		a.Do(func() tea.Msg {
			text, err := restart()
			return demoRestartedMsg{text: text, err: err}
		})
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
	if m.Button != tea.MouseLeft || a.ModalOpen() {
		return
	}
	a.paneMouse(tea.MouseClickMsg(m), m)
}

// demoRestartedMsg is what the demo's restart of its agents did.
type demoRestartedMsg struct {
	text string
	err  error
}
