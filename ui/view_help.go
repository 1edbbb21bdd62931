package ui

import (
	"strings"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"github.com/fgtop/fgtop/themes"
)

// helpLines is the help screen's body: the key map's full help (the very
// bindings that handle keys), then what the bars and commands mean.
func (a *App) helpLines(w int) []string {
	st := a.st
	var out []string
	role := a.keys.Role()
	head := []span{{lvlTitle, " Keys"}, {lvlDim, "  role: " + role.String()}}
	if role == RoleViewer {
		head = append(head, span{lvlDim, " (read-only: no key changes the node)"})
	}
	out = append(out, spansRow(st, head, w))
	if a.helpFilter != "" {
		return append(out, a.filteredHelp(w)...)
	}
	out = append(out, "")
	for i, row := range a.helpRows(w - 2) {
		if i > 0 {
			out = append(out, "")
		}
		for _, ln := range strings.Split(a.help.FullHelpView(row), "\n") {
			ln = " " + ln
			out = append(out, ln+spaces(w-width(ln)))
		}
	}
	return append(out, a.helpNotes(w)...)
}

// helpNotes is the help screen below the keys: what the marks, commands
// and columns mean.
func (a *App) helpNotes(w int) []string {
	st := a.st
	g := st.G
	if a.ed != nil {
		return a.editorHelp(w)
	}
	var out []string
	legend := func(p paint, glyph string, rest string) string {
		l := newLine(paint{})
		l.gap(3)
		l.putW(p, repeat(glyph, 3), 3)
		l.cell(st.Text, "  "+rest, w-l.w, false, g.Ellipsis)
		return l.finish(w)
	}
	look0, shape0 := st.look(0)
	look1, shape1 := st.look(1)
	out = append(out, "", spansRow(st, []span{{lvlTitle, " Share bars"}}, w),
		legend(look0, shape0, "a kernel's share, in a colour and shape of its own (a: per agent)"),
		legend(look1, shape1, "another kernel; its row in the kernel list has the same mark"),
		legend(look0, g.Drift, "drift: a kernel on a device its agent does not own"),
		legend(st.Free, g.Free, "free capacity"),
		legend(st.Over, g.Over, "held beyond capacity (the figures turn red)"),
		spansRow(st, []span{{lvlDim, "   figures are exact decimals: held/capacity in the device's slot units"}}, w),
		spansRow(st, []span{{lvlDim, "   N/A: the device source could not read a value (never shown as 0)"}}, w),
		"", spansRow(st, []span{{lvlTitle, " Commands"}}, w))
	themeCmd := ":theme NAME|PATH"
	if a.opts.LoadTheme != nil { // served: names only
		themeCmd = ":theme NAME"
	}
	cmds := [][2]string{
		{":q", "quit"},
		{":sort COL [asc|desc]", "sort kernels: " + strings.Join(a.kernels.sortColumns(), " ")},
		{themeCmd, "switch theme: " + strings.Join(themes.Names(), " ")},
		{":filter TEXT", "filter kernels, like /TEXT; !TEXT keeps what does not match"},
		{":follow", "kernels follow the selected device (f toggles)"},
	}
	for _, c := range cmds {
		out = append(out, spansRow(st, []span{{lvlAccent, "   " + padRight(c[0], 22)}, {lvlPlain, c[1]}}, w))
	}
	out = append(out, "", spansRow(st, []span{{lvlTitle, " Filter"}}, w),
		spansRow(st, []span{{lvlDim, "   words must all match (id, agent, state, devices, owner, session, image); !word inverts one"}}, w))
	for _, f := range filterHelp() {
		out = append(out, spansRow(st, []span{{lvlAccent, "   " + padRight(f[0], 22)}, {lvlPlain, f[1]}}, w))
	}
	out = append(out, "", spansRow(st, []span{{lvlTitle, " Device columns"}}, w))
	for _, c := range [][2]string{
		{"HELD/CAPACITY", "one colour (or pattern) per kernel, as its mark in the kernel list; over capacity and drift marked on the bar"},
		{"ALLOC BUSY", "history, one sample a second: share held, and GPU utilisation"},
	} {
		out = append(out, spansRow(st, []span{{lvlAccent, "   " + padRight(c[0], 22)}, {lvlPlain, c[1]}}, w))
	}
	out = append(out, "", spansRow(st, []span{{lvlTitle, " Kernel columns"}}, w))
	for _, c := range [][2]string{
		{"USER TYPE SESSION", "owner user id, session type and id (recovery.json; - without one)"},
		{"UTIL", "its GPU processes' utilisation of its busiest GPU; idle: held at 0 % for --idle-after; N/A: memory only"},
		{"GMEM", "GPU memory of its processes (mapped by container: /proc/PID/cgroup against the CID= line)"},
	} {
		out = append(out, spansRow(st, []span{{lvlAccent, "   " + padRight(c[0], 22)}, {lvlPlain, c[1]}}, w))
	}
	return out
}

// helpRows packs the key map's help groups into rows of columns that fit
// w cells: bubbles' FullHelpView puts every group side by side and cuts
// what does not fit, which at 80 columns would hide quit and help.
func (a *App) helpRows(w int) [][][]key.Binding {
	return helpRowsOf(&a.help, a.keys.fullHelpIn(a.helpScope()), w)
}

// helpRowsOf packs help groups into rows of columns that fit w cells (the
// node and fleet consoles' help screens).
func helpRowsOf(h *help.Model, groups [][]key.Binding, w int) [][][]key.Binding {
	h.SetWidth(0)
	var rows [][][]key.Binding
	used := 0
	for _, g := range groups {
		gw := lipgloss.Width(h.FullHelpView([][]key.Binding{g}))
		sep := width(h.FullSeparator)
		if len(rows) == 0 || used+sep+gw > w {
			rows = append(rows, [][]key.Binding{g})
			used = gw
			continue
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], g)
		used += sep + gw
	}
	h.SetWidth(w)
	return rows
}

func spansRow(st *Styles, sp []span, w int) string {
	l := newLine(paint{})
	putSpans(l, st, sp, w)
	return l.finish(w)
}

// viewHelp draws the help screen.
func (a *App) viewHelp(w, h int) []string {
	rows := a.viewHeader(w)
	body := a.helpLines(w)
	visible := max(h-len(rows)-2, 0)
	a.helpOff = min(a.helpOff, max(len(body)-visible, 0))
	hint := "type to filter, esc/? back"
	if a.helpFilter != "" {
		hint = "esc clears filter"
	}
	rows = append(rows, a.titleRow(w, []span{{lvlFocus, " Help "}}, []span{{lvlDim, hint}}, len(body), visible, a.helpOff))
	for i := a.helpOff; i < len(body) && len(rows) < h-1; i++ {
		rows = append(rows, body[i])
	}
	for len(rows) < h-1 {
		rows = append(rows, "")
	}
	return append(rows, a.helpFooter(w))
}

// helpFooter is the help screen's footer: over the editor, the editor's
// own (its keys still work from here, and the main screen's do not).
func (a *App) helpFooter(w int) string {
	if a.ed != nil {
		return a.viewEditorFooter(w)
	}
	return a.viewFooter(w)
}

// helpScope is the scope whose keys the help screen lists: the editor's
// view while it is open (context-sensitive help), else the main screen's.
func (a *App) helpScope() scope {
	if a.ed == nil {
		return scMain
	}
	switch a.ed.view {
	case edPlan:
		return scPlan
	case edJournal:
		return scJournal
	}
	return scEditor
}

// editorHelp explains the editor's marks and rules under its keys,
// wrapped (not cut) to the screen.
func (a *App) editorHelp(w int) []string {
	st := a.st
	g := st.G
	out := []string{"", spansRow(st, []span{{lvlTitle, " Partition editor"}}, w)}
	note := func(lvl level, s string) {
		for _, row := range wrapWords([]span{{lvl, s}}, w-3) {
			out = append(out, spansRow(st, append([]span{{lvlPlain, "   "}}, row...), w))
		}
	}
	note(lvlPlain, g.Owned+"  the agent owns the device in the draft   "+g.Gained+g.Owned+" it gains it   "+g.Lost+"  it loses it")
	note(lvlPlain, "LIVE: what kernels hold on the device now; ! marks kernels of an agent that will not own it (a move away from them, or left after an apply)")
	note(lvlPlain, "moves, cpu and mem need allocation-mode manual (m); auto-split shows the deal it would make")
	note(lvlPlain, "cpu takes core ranges (0-7,16), each core once; mem a size with a unit (120G, 96GiB; a bare number is bytes), not below the config's memory-align-size; the field says how it reads what you type, and what does not parse never enters the draft")
	note(lvlPlain, "apply opens a dialog whose default is Cancel; when live kernels would be left on devices their agent loses, it asks you to type that agent's id (tab to Apply, then Enter)")
	note(lvlPlain, "one operator edits at a time; another apply makes your draft STALE until you review it (p)")
	note(lvlPlain, "q is a letter here; esc leaves, ctrl+c quits (with a draft it asks first)")
	note(lvlDim, "the agents read agent.toml only at start-up: restart them after an apply")
	return out
}

// filteredHelp is the help screen while a filter is typed: the
// "filter: ..." line, then each key binding of the scope and each line of
// the notes that contains the filter, case-insensitively.
func (a *App) filteredHelp(w int) []string {
	st := a.st
	f := strings.ToLower(a.helpFilter)
	out := []string{spansRow(st, []span{{lvlAccent, " filter: "}, {lvlPlain, a.helpFilter}}, w), ""}
	n := 0
	for _, col := range a.keys.fullHelpIn(a.helpScope()) {
		for _, b := range col {
			h := b.Help()
			if strings.Contains(strings.ToLower(h.Key+" "+h.Desc), f) {
				out = append(out, spansRow(st, []span{{lvlAccent, "   " + padRight(h.Key, 12)}, {lvlPlain, h.Desc}}, w))
				n++
			}
		}
	}
	for _, ln := range a.helpNotes(w) {
		if t := ansi.Strip(ln); strings.TrimSpace(t) != "" && strings.Contains(strings.ToLower(t), f) {
			out = append(out, ln)
			n++
		}
	}
	if n == 0 {
		out = append(out, spansRow(st, []span{{lvlDim, "   nothing in the help matches"}}, w))
	}
	return out
}

// helpFilterKey takes a key typed on the help screen into its filter and
// reports whether it did. Letters filter (j, k and q are letters here;
// the arrows, pgup/pgdn, home/end still scroll and ctrl+c quits);
// backspace removes the last rune; esc clears a filter before it closes
// the help, and ? closes it only while no filter is typed.
func (a *App) helpFilterKey(msg tea.KeyPressMsg) bool {
	switch {
	case msg.Code == tea.KeyEscape:
		if a.helpFilter == "" {
			return false
		}
		a.helpFilter, a.helpOff = "", 0
		return true
	case msg.Code == tea.KeyBackspace:
		if r := []rune(a.helpFilter); len(r) > 0 {
			a.helpFilter = string(r[:len(r)-1])
		}
		a.helpOff = 0
		return true
	case msg.Text == "" || msg.Mod&(tea.ModCtrl|tea.ModAlt|tea.ModSuper) != 0,
		strings.ContainsFunc(msg.Text, unicode.IsControl):
		return false
	case msg.Text == "?" && a.helpFilter == "":
		return false
	}
	room := maxPromptRunes - utf8.RuneCountInString(a.helpFilter)
	if r := []rune(msg.Text); len(r) > room {
		a.flashf(lvlWarn, promptFullText)
		msg.Text = string(r[:max(room, 0)])
	}
	a.helpFilter += msg.Text
	a.helpOff = 0
	return true
}
