package console

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"
	"github.com/fgtop/fgtop/themes"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// maxPromptRunes is the longest filter or command line: far more than a
// kernel id, a path or a command needs.
const maxPromptRunes = 256

// prompt is the footer's filter or command line (/ and :), a layer over
// everything else while it is open: the filter follows the text as it is
// typed and esc gives back the one from before; enter runs a command line.
type prompt struct {
	*common
	kit.Closer
	kit.Area
	mode  PromptMode
	Input string
	// prev is the filter before the prompt opened.
	prev string
	// cancelled runs when esc closes the prompt (nil: nothing more than
	// the filter given back).
	cancelled func()
	// run runs a command line; setFilter applies the filter.
	run       func(string) tea.Cmd
	setFilter func(string)
	// kept runs when enter keeps the filter typed.
	kept func()
}

// startPrompt opens the filter or the command line; cancelled (may be
// nil) runs when esc closes it.
func (a *App) startPrompt(m PromptMode, initial string, cancelled func()) {
	a.push(&prompt{common: a.common, mode: m, Input: initial, prev: a.Kernels.Filter, run: a.runCommand,
		setFilter: a.Kernels.setFilter, cancelled: cancelled, kept: a.filterKept})
}

// filterKept says, in the footer's whole width, why a kept filter can
// match nothing (a /dev: name that names no device or several), as :dev
// says it: the kernels table's empty line is a pane wide, and cut.
// A filter kept after it, which matches, takes that word back (it stayed
// until the flash timed out, beside a table that now held kernels).
func (a *App) filterKept() {
	if e := a.Kernels.Showing.FilterErr; e != "" {
		a.Flashf(kit.LvlWarn, e)
		a.Flash.Short = a.Kernels.Showing.FilterShort
		a.filterFlash = e
		return
	}
	if a.filterFlash != "" && a.Flash.Text == a.filterFlash {
		a.Flash = kit.Flash{}
	}
	a.filterFlash = ""
}

// FilterToExtend is a kept filter as / reopens it: with a space after it,
// so that what is typed next is a word of its own (is:idle then !numa0,
// not is:idle!numa0).
func FilterToExtend(f string) string {
	if f == "" || strings.HasSuffix(f, " ") {
		return f
	}
	return f + " "
}

// Rank stacks the prompt over everything.
func (p *prompt) Rank() kit.LayerRank { return kit.RankPrompt }

// Update edits the line; the prompt closes itself on enter, esc, or
// backspace on an empty line.
func (p *prompt) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	p.Invalidate()
	was := p.mode
	cmd := PromptKey(&p.mode, &p.Input, p.prev, k, p.run, p.setFilter,
		func() { p.Flashf(kit.LvlWarn, PromptFullText()) })
	if p.mode == PromptNone {
		p.Close()
		if was == PromptFilter && k.Code == tea.KeyEnter && p.kept != nil {
			p.kept()
		}
		if k.Code == tea.KeyEscape && p.cancelled != nil {
			p.cancelled()
		}
	}
	return cmd
}

// View is the footer row: the lead character, the text (its end when it
// is too long) and a cursor.
func (p *prompt) View() []string { return []string{PromptLine(p.St, p.mode, p.Input, p.W)} }

// PromptLine draws a prompt in w cells (the node and fleet consoles'
// footers), with the prompt's own way out at its right while there is
// room: ? and q type themselves here, so the footer names the keys that
// work instead (enter, esc, ctrl+c).
func PromptLine(st *kit.Styles, mode PromptMode, input string, w int) string {
	lead, enter := "/", "keep filter"
	if mode == PromptCommand {
		lead, enter = ":", "run"
	}
	line := func(w int) string {
		l := kit.NewLine(kit.Paint{})
		l.Put(st.Accent, lead)
		if kit.Width(input)+2 > w {
			input = st.G.Ellipsis + kit.TruncateLeft(input, w-3)
		}
		l.Put(st.Text, input)
		l.Put(st.Accent, "_")
		return l.Finish(w)
	}
	keep := []key.Binding{
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", enter)),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
	}
	return kit.FooterBeside(st, line, keep, w)
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
	promptQuit                        // ctrl+c: quit, as everywhere else
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
	case msg.String() == "ctrl+c":
		return in, promptQuit
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

// PromptFullText is the flash of a prompt that is full.
func PromptFullText() string {
	return fmt.Sprintf("the prompt takes at most %d characters", maxPromptRunes)
}

// PromptKey is the prompt handling both consoles share: a key edits
// *input (editPrompt); enter runs a command line; the filter follows the
// text while typing (setFilter) and esc gives it back its value from
// before (prev); full is told when typed text was cut.
func PromptKey(mode *PromptMode, input *string, prev string, msg tea.KeyPressMsg,
	run func(string) tea.Cmd, setFilter func(string), full func(),
) tea.Cmd {
	in, what := editPrompt(*input, msg)
	switch what {
	case promptAccepted:
		m := *mode
		*mode, *input = PromptNone, ""
		if m == PromptCommand {
			return run(in)
		}
		return nil
	case promptCancelled:
		if *mode == PromptFilter {
			setFilter(prev)
		}
		*mode, *input = PromptNone, ""
		return nil
	case promptClosed:
		*mode = PromptNone
		return nil
	case promptQuit:
		*mode, *input = PromptNone, ""
		return tea.Quit
	case promptIgnored:
		return nil
	case promptFull:
		full()
	}
	*input = in
	if *mode == PromptFilter {
		setFilter(in)
	}
	return nil
}

// themeLoaded adopts the theme `:theme` loaded, or says why it could not.
func (a *App) themeLoaded(msg themeLoadedMsg) {
	err := msg.Err
	if err == nil {
		err = a.setTheme(msg.t)
	}
	if err != nil {
		a.Flashf(kit.LvlCrit, err.Error())
		if name := msg.name; errors.Is(err, themes.ErrUnknown) && themeName(name) {
			// The list of names is cut at 80 columns (the tour): the
			// name meant, and where the list is whole, before it.
			short := "unknown theme " + strconv.Quote(name)
			if near := model.Closest(name, themes.Names()); near != "" {
				short += "; did you mean " + near + "?"
			}
			a.Flash.Short = short + " (:theme lists them)"
		}
		return
	}
	a.theme.explicit = true
	a.Flashf(kit.LvlInfo, "theme "+msg.t.Name)
}

// themeName reports whether s is a theme's name as :theme takes one
// (letters, digits, '-' and '_'), not a path nor a refused name, whose
// errors say why in their first words.
func themeName(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) < 0
}

// unknownValue says that what was typed names nothing: the name meant
// (a typo's nearest) first, then what exists; where that is cut (at 80
// columns a list is), the footer says where the whole list is instead.
func (a *App) unknownValue(msg, typed string, known []string, listLead, where string) {
	if near := model.Closest(typed, known); near != "" {
		msg += "; did you mean " + near + "?"
	}
	a.Flashf(kit.LvlWarn, msg+"; "+listLead+strings.Join(known, " "))
	a.Flash.Short = msg + " (" + where + ")"
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

// consoleCommand is one ':' command: the names it answers to (the first
// is the one help shows), an example for the unknown-command hint, and
// what it does with the line's fields (f[0] is the name) and the line.
type consoleCommand struct {
	names   []string
	example string
	run     func(a *App, f []string, line string) tea.Cmd
}

// commands is every ':' command, in the order help lists them: the one
// table runCommand dispatches by and help and the hint are made from, so
// a command cannot work without being listed, nor be listed and not work.
func commands() []consoleCommand {
	return []consoleCommand{
		{[]string{"sort"}, ":sort COLUMN", func(a *App, f []string, _ string) tea.Cmd {
			if len(f) < 2 {
				a.Flashf(kit.LvlWarn, "usage: :sort COLUMN [asc|desc]; columns: "+strings.Join(a.Kernels.sortColumns(), " "))
				a.Flash.Short = "usage: :sort COLUMN [asc|desc] (? lists the columns)"
				return nil
			}
			desc := len(f) > 2 && (f[2] == "desc" || f[2] == "d")
			// An order that is neither sorted ascending without a word:
			// ":sort id sideways" looked taken.
			if len(f) > 3 || len(f) == 3 && !desc && f[2] != "asc" && f[2] != "a" {
				a.Flashf(kit.LvlWarn, fmt.Sprintf("usage: :sort COLUMN [asc|desc]; %q is no order", strings.Join(f[2:], " ")))
				return nil
			}
			if strings.HasPrefix(f[1], "-") {
				f[1], desc = f[1][1:], true
			}
			if !a.Kernels.setSort(f[1], desc) {
				a.unknownValue("no column "+f[1], f[1], a.Kernels.sortColumns(), "columns: ", "? lists the columns")
			}
			return nil
		}},
		{[]string{"filter"}, ":filter TEXT", func(a *App, _ []string, line string) tea.Cmd {
			a.Kernels.setFilter(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "filter")))
			return nil
		}},
		{[]string{"dev"}, ":dev GPU1", func(a *App, f []string, _ string) tea.Cmd {
			a.devCommand(strings.Join(f[1:], " "))
			return nil
		}},
		{[]string{"follow"}, ":follow", func(a *App, _ []string, _ string) tea.Cmd {
			a.Kernels.follow = !a.Kernels.follow
			a.Kernels.refresh()
			return nil
		}},
		{[]string{"theme"}, ":theme NAME", func(a *App, f []string, _ string) tea.Cmd {
			if len(f) < 2 {
				a.Flashf(kit.LvlInfo, "theme "+a.St.Theme.Name+"; built-in: "+strings.Join(themes.Names(), " "))
				return nil
			}
			// Loading may read a file: never inside Update.
			load, arg := a.opts.LoadTheme, strings.Join(f[1:], " ")
			if load == nil {
				load = themes.Load
			}
			return func() tea.Msg {
				t, err := load(arg)
				return themeLoadedMsg{t: t, Err: err, name: arg}
			}
		}},
		{[]string{"fit"}, ":fit cuda.shares=0.5", func(a *App, f []string, _ string) tea.Cmd { return a.fitCommand(f) }},
		{[]string{"journal"}, ":journal", func(a *App, _ []string, _ string) tea.Cmd { return a.journalCommand() }},
		{[]string{"at"}, ":at TIME", func(a *App, f []string, _ string) tea.Cmd { return a.pastCommand(f) }},
		{[]string{"live"}, ":live", func(a *App, f []string, _ string) tea.Cmd { return a.pastCommand(f) }},
		{[]string{"span"}, ":span 1d", func(a *App, f []string, _ string) tea.Cmd { return a.spanCommand(f) }},
		{[]string{"help"}, ":help", func(a *App, _ []string, _ string) tea.Cmd {
			a.openHelp()
			return nil
		}},
		{[]string{"q", "q!", "quit", "exit"}, ":q", func(*App, []string, string) tea.Cmd { return tea.Quit }},
	}
}

// editorWords are the commands people type for what the partition
// editor's keys do.
var editorWords = []string{"edit", "editor", "e", "apply", "rollback", "undo", "plan", "partition"}

// runCommand runs a ':' command.
func (a *App) runCommand(line string) tea.Cmd {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	// A command's answer is its own: the last one's message (an error
	// it made) would read as this one's.
	if a.Flash.Text != "" {
		a.Flash = kit.Flash{}
		a.Invalidate()
	}
	cmds := commands()
	for _, c := range cmds {
		if slices.Contains(c.names, f[0]) {
			return c.run(a, f, line)
		}
	}
	examples := make([]string, len(cmds))
	var known []string
	for i, c := range cmds {
		examples[i] = c.example
		known = append(known, c.names...)
	}
	msg := "unknown command :" + f[0]
	if slices.Contains(editorWords, f[0]) {
		// The partition is edited through keys, not commands: a typo's
		// nearest command named instead was :exit for :edit, which quits
		// (the tour).
		how, short := "the partition editor is e (A applies, J then U undoes)", "the partition editor is e"
		if !a.Keys.Role().CanWrite() {
			how = "read-only: the partition editor (e) is an operator's, in a console on the node that is not read-only"
			short = "read-only: no partition editor here"
		}
		a.Flashf(kit.LvlWarn, msg+"; "+how)
		a.Flash.Short = msg + "; " + short
		return nil
	}
	// The short forms, for a footer the list would cut (":…" at 80
	// columns): the command meant, or where the list is whole.
	short := msg + " (? lists every command)"
	if near := model.Closest(f[0], known); near != "" {
		// Before the list: a long footer cuts its end.
		msg += "; did you mean :" + near + "?"
		short = msg
	}
	a.Flashf(kit.LvlWarn, msg+" (try "+strings.Join(examples, ", ")+")")
	a.Flash.Short = short
	return nil
}

// devCommand selects the device name names (:dev GPU1, :dev MIG 4/0, an
// id, …2d01, a unique prefix: names, as history --device takes them); a
// name that names nothing or several flashes what the node has.
func (a *App) devCommand(name string) {
	if name == "" {
		a.Flashf(kit.LvlWarn, "usage: :dev NAME (GPU1, MIG 4/0, an id or a unique prefix)")
		return
	}
	i, err := resolveDevice(a.d, name)
	if err != nil {
		a.Flashf(kit.LvlWarn, err.Error())
		a.Flash.Short = shortOf(err)
		return
	}
	a.setFocusPane(paneDevices)
	a.sizePanes()
	a.devices.selectRow(i)
}

// deviceNotFound is resolveDevice's error for a name that names no
// device: it lists the node's devices by the names the screen shows, after
// the one meant where the name is a typo of one.
type deviceNotFound struct {
	name   string
	labels []string
}

func (e *deviceNotFound) Error() string {
	msg := fmt.Sprintf("no device %q on this node", e.name)
	if len(e.labels) == 0 {
		return msg
	}
	if near := model.Closest(e.name, e.labels); near != "" {
		msg += "; did you mean " + near + "?"
	}
	return msg + "; it has " + strings.Join(e.labels, ", ")
}

// Short is the error for a footer that would cut its list (at 80 columns
// "it has GPU0, GPU1, GPU2, GPU3, …" lost the rest, MIG instances and
// all): the name meant, else how many devices there are and the first
// and last of them, as the Devices pane lists them whole.
func (e *deviceNotFound) Short() string {
	msg := fmt.Sprintf("no device %q", e.name)
	if near := model.Closest(e.name, e.labels); near != "" {
		return msg + "; did you mean " + near + "?"
	}
	switch n := len(e.labels); n {
	case 0:
		return msg + " on this node"
	case 1:
		return msg + "; only " + e.labels[0]
	case 2:
		return msg + " among " + e.labels[0] + " and " + e.labels[1]
	default:
		// Short enough beside /dev:'s "esc back to GPU0" too.
		return fmt.Sprintf("%s among %d, %s to %s", msg, n, e.labels[0], e.labels[n-1])
	}
}

// shortOf is an error's short form for the footer (Flash.Short), "" if
// it has none.
func shortOf(err error) string {
	var nf *deviceNotFound
	if errors.As(err, &nf) {
		return nf.Short()
	}
	return ""
}

// resolveDevice is the row in d.Devs that name names, as history
// --device resolves it; the error, in the words :dev and the /dev:
// filter both say, lists the node's devices when name names none and the
// devices it names when it names several.
func resolveDevice(d *render.Derived, name string) (int, error) {
	if d == nil {
		return -1, fmt.Errorf("no device %q: no snapshot of this node yet", name)
	}
	var devs []model.Device
	for i := range d.Devs {
		if dv := d.Devs[i].Dev; dv != nil {
			devs = append(devs, *dv)
		}
	}
	nd := names.NewDevices(devs, "this node")
	k, err := nd.Resolve(name)
	var nf *names.NotFoundError
	var amb *names.AmbiguousError
	switch {
	case errors.As(err, &amb):
		// Its candidates are keys and UUIDs first, too long for the
		// footer at 80 columns: name them as the screen does.
		var them []string
		for i := range d.Devs {
			if l := d.Devs[i].Label; l != "" && slices.Contains(amb.Candidates, nd.Describe(d.Devs[i].Key)) {
				them = append(them, l)
			}
		}
		if len(them) == len(amb.Candidates) {
			return -1, fmt.Errorf("device %q is ambiguous on this node: it names %s; give more of it", name, strings.Join(them, ", "))
		}
		return -1, err
	case errors.As(err, &nf):
		// The error lists the devices by plugin key and UUID first, so at
		// 80 columns the footer cut it before a single name the screen
		// shows; list those names instead.
		var shown []string
		for i := range d.Devs {
			if l := d.Devs[i].Label; l != "" {
				shown = append(shown, l)
			}
		}
		return -1, &deviceNotFound{name: name, labels: shown}
	case err != nil:
		return -1, err
	}
	if i, ok := d.DevIndex[k]; ok {
		return i, nil
	}
	return -1, fmt.Errorf("no device %q on this node", name)
}
