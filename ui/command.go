package ui

import (
	"fmt"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/themes"
)

// maxPromptRunes is the longest filter or command line: far more than a
// kernel id, a path or a command needs.
const maxPromptRunes = 256

func (a *App) startPrompt(m promptMode, initial string) {
	a.prompt, a.input = m, initial
	a.promptPrev = a.kernels.filter
	a.invalidate()
}

// promptEdit is what a key did to a prompt line.
type promptEdit uint8

const (
	promptIgnored   promptEdit = iota // a key the prompt does not take
	promptChanged                     // the text changed (typing, deleting)
	promptFull                        // typed text was cut at maxPromptRunes
	promptAccepted                    // enter
	promptCancelled                   // esc
	promptClosed                      // backspace on an empty line
)

// editPrompt applies a key to a prompt line (the filter, the command
// line): the node console and the fleet console share its keys and its
// length limit. Typed (or pasted) text beyond maxPromptRunes is dropped: a
// 1 MB filter cost 25 s of CPU, re-filtering at every key.
func editPrompt(in string, msg tea.KeyPressMsg) (string, promptEdit) {
	switch {
	case msg.Code == tea.KeyEnter:
		return in, promptAccepted
	case msg.Code == tea.KeyEscape:
		return in, promptCancelled
	case msg.Code == tea.KeyBackspace:
		if in == "" {
			return in, promptClosed
		}
		return dropLastGrapheme(in), promptChanged
	case msg.String() == "ctrl+u":
		return "", promptChanged
	case msg.Text != "":
		room := maxPromptRunes - utf8.RuneCountInString(in)
		text := msg.Text
		if utf8.RuneCountInString(text) <= room {
			return in + text, promptChanged
		}
		return in + string([]rune(text)[:max(room, 0)]), promptFull
	}
	return in, promptIgnored
}

// promptFullText is the flash of a prompt that is full.
var promptFullText = fmt.Sprintf("the prompt takes at most %d characters", maxPromptRunes)

// handlePromptKey edits the filter or command line. The filter applies
// while typing; Esc restores the one before.
func (a *App) handlePromptKey(msg tea.KeyPressMsg) tea.Cmd {
	a.invalidate()
	return promptKey(&a.prompt, &a.input, a.promptPrev, msg, a.runCommand,
		a.kernels.setFilter,
		func() { a.flashf(lvlWarn, promptFullText) })
}

// promptKey is the prompt handling both consoles share: a key edits
// *input (editPrompt); enter runs a command line; the filter follows the
// text while typing (setFilter) and esc gives it back its value from
// before (prev); full is told when typed text was cut.
func promptKey(mode *promptMode, input *string, prev string, msg tea.KeyPressMsg,
	run func(string) tea.Cmd, setFilter func(string), full func(),
) tea.Cmd {
	in, what := editPrompt(*input, msg)
	switch what {
	case promptAccepted:
		m := *mode
		*mode, *input = promptNone, ""
		if m == promptCommand {
			return run(in)
		}
		return nil
	case promptCancelled:
		if *mode == promptFilter {
			setFilter(prev)
		}
		*mode, *input = promptNone, ""
		return nil
	case promptClosed:
		*mode = promptNone
		return nil
	case promptIgnored:
		return nil
	case promptFull:
		full()
	}
	*input = in
	if *mode == promptFilter {
		setFilter(in)
	}
	return nil
}

// themeLoaded adopts the theme `:theme` loaded, or says why it could not.
func (a *App) themeLoaded(msg themeLoadedMsg) {
	err := msg.err
	if err == nil {
		err = a.setTheme(msg.t)
	}
	if err != nil {
		a.flashf(lvlCrit, err.Error())
		return
	}
	a.theme.explicit = true
	a.flashf(lvlInfo, "theme "+msg.t.Name)
}

func dropLastGrapheme(s string) string {
	w := ansi.StringWidth(s)
	if w == 0 {
		return ""
	}
	out := ansi.Cut(s, 0, w-1)
	if out == s { // a zero-width tail: fall back to bytes
		return s[:len(s)-1]
	}
	return out
}

// runCommand runs a ':' command.
func (a *App) runCommand(line string) tea.Cmd {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	switch f[0] {
	case "q", "q!", "quit", "exit":
		return tea.Quit
	case "sort":
		if len(f) < 2 {
			a.flashf(lvlWarn, "usage: :sort COLUMN [asc|desc]; columns: "+strings.Join(a.kernels.sortColumns(), " "))
			return nil
		}
		desc := len(f) > 2 && (f[2] == "desc" || f[2] == "d")
		if strings.HasPrefix(f[1], "-") {
			f[1], desc = f[1][1:], true
		}
		if !a.kernels.setSort(f[1], desc) {
			a.flashf(lvlWarn, "no column "+f[1]+"; columns: "+strings.Join(a.kernels.sortColumns(), " "))
		}
	case "theme":
		if len(f) < 2 {
			a.flashf(lvlInfo, "theme "+a.st.Theme.Name+"; built-in: "+strings.Join(themes.Names(), " "))
			return nil
		}
		// Loading may read a file: never inside Update.
		load, arg := a.opts.LoadTheme, strings.Join(f[1:], " ")
		if load == nil {
			load = themes.Load
		}
		return func() tea.Msg {
			t, err := load(arg)
			return themeLoadedMsg{t: t, err: err}
		}
	case "filter":
		a.kernels.setFilter(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "filter")))
	case "follow":
		a.kernels.follow = !a.kernels.follow
		a.kernels.refresh()
	case "help":
		a.overlay, a.helpOff, a.helpFilter = ovHelp, 0, ""
	default:
		a.flashf(lvlWarn, "unknown command :"+f[0]+" (try :q, :sort COLUMN, :theme NAME, :filter TEXT)")
	}
	return nil
}
