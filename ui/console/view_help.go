package console

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"

	"github.com/fgtop/fgtop/themes"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// helpScreen is the help: the key map's full help for what is on screen
// (the very bindings that handle keys), then what the marks, commands and
// columns mean. / filters it.
type helpScreen struct {
	*common
	kit.Closer
	kit.Area
	// ed is the editor the help was opened over: its keys are listed (and
	// handled: q is a letter here as there), else the main screen's.
	ed *editor.Editor
	// themeNames: :theme takes names only (a console served over SSH).
	themeNames bool
	// noRecord: the console keeps no history, so :at, :live and :span
	// (longer than the live 5m) only say so: the help says it once.
	noRecord bool
	// noRecordWhy is what they say instead (App.noRecordWhy).
	noRecordWhy string
	// sortColumns are the kernel table's sort columns, for :sort.
	sortColumns func() []string
	// shown are the column titles the main screen draws at this width
	// (nil: all): the help explains only those.
	shown func() map[string]bool
	hm    help.Model
	// Filter is what was typed: only the rows that contain it (any case)
	// show.
	Filter string
	// typing: / opened the filter, which takes the letters until enter
	// or esc; prev is the filter from before (esc gives it back).
	typing bool
	prev   string
	off    int
}

// openHelp opens the help for what is on screen: over the editor, the
// editor's keys and notes.
func (a *App) openHelp() {
	a.push(&helpScreen{common: a.common, ed: a.ed(), themeNames: a.opts.LoadTheme != nil, noRecord: a.opts.History == "", noRecordWhy: a.noRecordWhy(true),
		sortColumns: a.Kernels.sortColumns, shown: a.shownColumns, hm: help.New()})
}

// shownColumns are the titles of the optional device and kernel columns
// drawn at the current width.
func (a *App) shownColumns() map[string]bool {
	if a.d == nil || a.Kernels.cols == nil {
		return nil
	}
	m := map[string]bool{}
	for _, c := range a.Kernels.cols {
		m[c.Title] = true
	}
	dc := deviceColumns(a.devices.W, a.d.DevMeas)
	m["ALLOC"], m["BUSY"] = dc.sparkA > 0, dc.sparkU > 0
	return m
}

// Rank stacks the help with the screens.
func (hs *helpScreen) Rank() kit.LayerRank { return kit.RankScreen }

// Update keeps the console's habits: j/k, the arrows, pgup/pgdn and g/G
// scroll; q, esc and ? close the help (esc clears a kept filter first);
// ctrl+c quits. / opens the filter in the footer, as on the main screen,
// and only then do letters type: enter keeps the filter, esc gives back
// the one from before, backspace on an empty line closes it.
func (hs *helpScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.MouseWheelMsg:
		hs.off = max(hs.off+kit.WheelDelta(tea.Mouse(msg)), 0)
	case tea.KeyPressMsg:
		if hs.typing && hs.filterKey(msg) {
			return nil
		}
		if !hs.typing {
			switch msg.String() {
			case "/":
				hs.typing, hs.prev = true, hs.Filter
				return nil
			case "q":
				// q leaves the help, not the console: over the editor q
				// is no key, and on the main screen it quits; here it
				// is the way back, as esc is.
				hs.Close()
				return nil
			}
		}
		switch act := hs.Keys.LookupIn(hs.Scope(), msg); act {
		case kit.ActQuit:
			hs.Send(kit.QuitMsg{})
		case kit.ActBack:
			if hs.Filter != "" {
				hs.Filter, hs.off = "", 0
				return nil
			}
			hs.Close()
		case kit.ActHelp:
			hs.Close()
		default:
			hs.Scroll(&hs.off, act)
		}
	}
	return nil
}

// footerKeys are the keys that work on the help while no filter is
// typed (Update): the filter, scrolling, the way back, quit.
func (hs *helpScreen) footerKeys() []key.Binding {
	bs := []key.Binding{
		key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		key.NewBinding(key.WithKeys("j", "k"), key.WithHelp("j/k", "scroll")),
	}
	if hs.Filter != "" {
		bs = append(bs, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
			key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "back")))
	} else {
		bs = append(bs, key.NewBinding(key.WithKeys("q", "esc"), key.WithHelp("q/esc", "back")))
	}
	return append(bs, key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")))
}

// Footer is the help's own key line; while the filter is typed, the
// filter line the main screen's / opens (PromptLine), with its keys.
func (hs *helpScreen) Footer(w int) string {
	if hs.typing {
		return PromptLine(hs.St, PromptFilter, hs.Filter, w)
	}
	// The ways out stay at the right at any width (kit.FooterBeside);
	// the filter and scroll keys take the room left.
	return kit.FooterBeside(hs.St, func(w int) string { return kit.ShortHelpOf(hs.St, hs.footerKeys()[:2], w) }, hs.FooterKeep(), w)
}

// FooterKeep is what the footer keeps beside a flash: while typing esc
// (cancel) and ctrl+c, else the way back and quit.
func (hs *helpScreen) FooterKeep() []key.Binding {
	if hs.typing {
		return []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
			key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))}
	}
	return hs.footerKeys()[2:]
}

// Lines is the help screen's body, made again only when what it shows
// may have changed.
func (hs *helpScreen) Lines(w int) []string {
	m := hs.memo
	if m == nil || hs.ed != nil {
		// The editor's notes follow its state, which has no key here.
		return hs.lines(w)
	}
	k := hs.linesKey(w)
	if m.help == nil || k != m.helpKey || hs.St != m.helpSt {
		m.help, m.helpKey, m.helpSt = hs.lines(w), k, hs.St
	} else {
		m.kept++
	}
	return slices.Clip(m.help)
}

// linesKey is everything the body (without an editor) is made from: the
// width, the filter, the key map's bindings as the help shows them, and
// what the notes list; the styles are kept beside it as the pointer
// itself (a theme is a new *kit.Styles): their address as text would not
// keep them alive, and a later theme's styles could be made there.
func (hs *helpScreen) linesKey(w int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\x00%s\x00%v\x00%v\x00%v\x00%v\x00", w, hs.Filter, hs.Keys.Role(), hs.Scope(), hs.themeNames, hs.noRecord)
	for _, col := range hs.Keys.FullHelpIn(hs.Scope()) {
		for _, kb := range col {
			h := kb.Help()
			if kb.Enabled() {
				b.WriteByte('+')
			}
			b.WriteString(h.Key + "\x01" + h.Desc + "\x01" + strings.Join(kb.Keys(), "\x01") + "\x00")
		}
		b.WriteByte('\x02')
	}
	if hs.sortColumns != nil {
		b.WriteString(strings.Join(hs.sortColumns(), " "))
	}
	b.WriteByte('\x00')
	if hs.shown != nil {
		m := hs.shown()
		if m == nil {
			b.WriteString("all")
		}
		for _, t := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(&b, "%s=%t\x01", t, m[t])
		}
	}
	return b.String()
}

// lines makes the help screen's body.
func (hs *helpScreen) lines(w int) []string {
	st := hs.St
	var out []string
	role := hs.Keys.Role()
	head := []kit.Span{{Lvl: kit.LvlTitle, Text: " Keys"}, {Lvl: kit.LvlDim, Text: "  role: " + role.String()}}
	if role == kit.RoleViewer {
		head = append(head, kit.Span{Lvl: kit.LvlDim, Text: " (read-only: no key changes the node)"})
	}
	out = append(out, kit.SpansRow(st, head, w))
	if hs.Filter != "" {
		return append(out, hs.filtered(w)...)
	}
	out = append(out, "")
	hs.hm.Styles, hs.hm.Ellipsis = st.Help, st.G.Ellipsis
	for i, row := range kit.HelpRowsOf(&hs.hm, hs.Keys.FullHelpIn(hs.Scope()), w-2) {
		if i > 0 {
			out = append(out, "")
		}
		for _, ln := range strings.Split(hs.hm.FullHelpView(row), "\n") {
			ln = " " + ln
			out = append(out, ln+kit.Spaces(w-kit.Width(ln)))
		}
	}
	return append(out, hs.notes(w)...)
}

// helpNotes is the help screen below the keys: what the marks, commands
// and columns mean.
func (hs *helpScreen) notes(w int) []string {
	st := hs.St
	g := st.G
	if hs.ed != nil {
		return editorHelp(st, w, hs.ed)
	}
	var out []string
	legend := func(p kit.Paint, glyph string, rest string) string {
		l := kit.NewLine(kit.Paint{})
		l.Gap(3)
		l.PutW(p, kit.Repeat(glyph, 3), 3)
		l.Cell(st.Text, "  "+rest, w-l.W, false, g.Ellipsis)
		return l.Finish(w)
	}
	// entry is a row of a name and what it means, wrapped under the
	// meaning's column where the screen is narrower than it: at 80
	// columns :at's syntax was cut after "...--history DIR): the n…",
	// and the help was the only place that said it.
	entry := func(name, text string) []string {
		const col = 3 + 22
		lead := kit.Span{Lvl: kit.LvlAccent, Text: "   " + kit.PadRight(name, 22)}
		if w-col < 24 {
			return []string{kit.SpansRow(st, []kit.Span{lead, {Lvl: kit.LvlPlain, Text: text}}, w)}
		}
		var rows []string
		// Wrapped as drawn: with --ascii "…a104" is "...a104", two cells
		// wider than the wrap counted, and "(as history --device)" was cut
		// "--devic~".
		for i, r := range kit.WrapWords(st.Words([]kit.Span{{Lvl: kit.LvlPlain, Text: text}}), w-col) {
			if i > 0 {
				lead = kit.Span{Lvl: kit.LvlPlain, Text: kit.Spaces(col)}
			}
			rows = append(rows, kit.SpansRow(st, append([]kit.Span{lead}, r...), w))
		}
		return rows
	}
	look0, shape0 := st.Look(0)
	look1, shape1 := st.Look(1)
	out = append(out, "", kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlTitle, Text: " Share bars"}}, w),
		legend(look0, shape0, "a kernel's share, in a colour and shape of its own (a: per agent)"),
		legend(look1, shape1, "another kernel; its row in the kernel list has the same mark"),
		legend(look0, g.Drift, "drift: a kernel on a device its agent does not own"),
		legend(st.Free, g.Free, "free capacity"),
		legend(st.Over, g.Over, "held beyond capacity (the figures turn red)"),
		kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlDim, Text: "   +N: N more kernels than a narrow bar has cells for"}}, w),
		kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlDim, Text: "   figures are exact decimals: held/capacity in the device's slot units"}}, w),
		kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlDim, Text: "   N/A: the device source could not read a value (never shown as 0)"}}, w),
		"", kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlTitle, Text: " Commands"}}, w))
	themeCmd := ":theme NAME|PATH"
	if hs.themeNames { // served: names only
		themeCmd = ":theme NAME"
	}
	cmds := [][2]string{
		{":q", "quit"},
		{":sort COL [asc|desc]", "sort kernels: " + strings.Join(hs.sortColumns(), " ")},
		{themeCmd, "switch theme: " + strings.Join(themes.Names(), " ")},
		{":filter TEXT", "search the node's kernels, like /TEXT; !TEXT keeps what does not match"},
		{":dev NAME", "select a device: GPU1, MIG 4/0, an id, …2d01 or a unique prefix"},
		{":follow", "kernels follow the selected device (f toggles)"},
		{":fit SLOTS", "where a new session lands: cuda.shares=0.5,cpu=2,mem=4g"},
		{":journal", "who applied or rolled back agent.toml, when, and what it changed (read-only)"},
		// The record's commands with their syntax: the key row lists
		// their names only.
		{":at TIME", "the node as recorded then: 14:02, yesterday 14:02, mon 09:30, -2h, 2026-11-27 14:02; [ ] step, :live returns"},
		{":live", "back to the live node from :at"},
		{":span 5m|1h|1d|7d", "the history graphs' span (longer than 5m: drawn from the record)"},
		{":help", "this help (? too)"},
	}
	if hs.noRecord {
		// The record's commands exist (each says why it cannot answer),
		// but this console keeps none: said where they are listed, as [
		// and ] are left out of the keys.
		for i := range cmds {
			if strings.HasPrefix(cmds[i][0], ":at ") || cmds[i][0] == ":live" || strings.HasPrefix(cmds[i][0], ":span ") {
				cmds[i][1] = "no record here (" + hs.noRecordWhy + "): " + cmds[i][1]
			}
		}
	}
	for _, c := range cmds {
		out = append(out, entry(c[0], c[1])...)
	}
	out = append(out, "", kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlTitle, Text: " Filter"}}, w))
	// Wrapped, not cut: at 80 columns the row ended "!wo…", and with it
	// the only word on how to invert a search.
	for _, r := range kit.WrapWords([]kit.Span{{Lvl: kit.LvlDim, Text: "words must all match (id, agent, state, devices, owner, session, image); !word inverts one"}}, w-3) {
		out = append(out, kit.SpansRow(st, append([]kit.Span{{Lvl: kit.LvlDim, Text: "   "}}, r...), w))
	}
	for _, f := range render.FilterHelp() {
		out = append(out, entry(f[0], f[1])...)
	}
	var shown map[string]bool
	if hs.shown != nil {
		shown = hs.shown()
	}
	// has keeps the titles this width draws, joined: the help explains no
	// column the screen does not show.
	has := func(titles ...string) string {
		var out []string
		for _, t := range titles {
			if shown == nil || shown[t] {
				out = append(out, t)
			}
		}
		return strings.Join(out, " ")
	}
	row := func(name, text string) {
		if name != "" {
			out = append(out, entry(name, text)...)
		}
	}
	out = append(out, "", kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlTitle, Text: " Device columns"}}, w))
	row("HELD/CAPACITY", "one colour (or pattern) per kernel, as its mark in the kernel list; over capacity and drift marked on the bar")
	switch hist := has("ALLOC", "BUSY"); hist {
	case "ALLOC BUSY":
		row(hist, "history, one sample a second: share held, and GPU utilisation")
	case "ALLOC":
		row(hist, "history, one sample a second: share held")
	}
	var kern []string
	// The kernel columns' title goes above their rows, which wrap: where
	// they start, not how many there are.
	kstart := len(out)
	if st := has("STATE"); st != "" {
		kern = append(kern, st)
		row(st, "ok: its resource.txt read; stale: the file no longer reads, its last good allocation counts; broken: it never read, it counts nothing; pending: no resource.txt yet")
	}
	if age := has("AGE"); age != "" {
		kern = append(kern, age)
		row(age, "since fgtop first saw the kernel")
	}
	if who := has("USER", "TYPE", "SESSION"); who != "" {
		var what []string
		for _, c := range [][2]string{{"USER", "owner user id"}, {"TYPE", "session type"}, {"SESSION", "session id"}} {
			if has(c[0]) != "" {
				what = append(what, c[1])
			}
		}
		kern = append(kern, who)
		row(who, strings.Join(what, ", ")+" (recovery.json; - without one)")
	}
	if u := has("UTIL"); u != "" {
		kern = append(kern, u)
		row(u, "its GPU processes' utilisation of its busiest GPU; idle: held at 0 % for --idle-after; N/A: memory only")
	}
	if g := has("GMEM"); g != "" {
		kern = append(kern, g)
		row(g, "GPU memory of its processes (mapped by container: /proc/PID/cgroup against the CID= line)")
	}
	if len(kern) > 0 {
		out = append(out[:kstart], append([]string{"", kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlTitle, Text: " Kernel columns"}}, w)}, out[kstart:]...)...)
	}
	return out
}

// View draws the title row and as many help lines as fit. (Its footer
// is what is under it: over the editor the editor's, whose keys work
// here.)
func (hs *helpScreen) View() []string {
	hint := "/ filter, q/esc back"
	switch {
	case hs.typing:
		hint = "type to filter"
	case hs.Filter != "":
		hint = "esc clears filter"
	}
	return scrolled(hs.St, hs.W, hs.H, []kit.Span{{Lvl: kit.LvlFocus, Text: " Help "}}, []kit.Span{{Lvl: kit.LvlDim, Text: hint}}, hs.Lines(hs.W), &hs.off)
}

// Scope is the scope whose keys the help lists and handles: the editor's
// view when it is over the editor (context-sensitive help), else the
// main screen's.
func (hs *helpScreen) Scope() kit.Scope {
	if hs.ed == nil || hs.ed.Closed() {
		return ScMain
	}
	return hs.ed.Scope()
}

// editorHelp explains the editor's marks and rules under its keys, for
// the format it edits, wrapped (not cut) to the screen.
func editorHelp(st *kit.Styles, w int, ed *editor.Editor) []string {
	out := []string{"", kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlTitle, Text: " Partition editor"}}, w)}
	for _, n := range ed.HelpNotes() {
		for _, row := range kit.WrapWords([]kit.Span{n}, w-3) {
			out = append(out, kit.SpansRow(st, append([]kit.Span{{Lvl: kit.LvlPlain, Text: "   "}}, row...), w))
		}
	}
	return out
}

// filtered is the help screen while a filter is typed: the
// "filter: ..." line, then each key binding of the scope and each line of
// the notes that contains the filter, case-insensitively.
func (hs *helpScreen) filtered(w int) []string {
	st := hs.St
	f := strings.ToLower(hs.Filter)
	out := []string{kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlAccent, Text: " filter: "}, {Lvl: kit.LvlPlain, Text: hs.Filter}}, w), ""}
	n := 0
	for _, col := range hs.Keys.FullHelpIn(hs.Scope()) {
		for _, b := range col {
			h := b.Help()
			if strings.Contains(strings.ToLower(h.Key+" "+h.Desc), f) {
				out = append(out, kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlAccent, Text: "   " + kit.PadRight(h.Key, 12)}, {Lvl: kit.LvlPlain, Text: h.Desc}}, w))
				n++
			}
		}
	}
	// A wrapped row's continuation lines (indented to its meaning's
	// column) match and show with the row they continue.
	notes := hs.notes(w)
	for i := 0; i < len(notes); {
		j := i + 1
		for j < len(notes) && isContinuation(ansi.Strip(notes[j])) {
			j++
		}
		var text strings.Builder
		for _, ln := range notes[i:j] {
			text.WriteString(strings.TrimSpace(ansi.Strip(ln)) + " ")
		}
		if t := text.String(); strings.TrimSpace(t) != "" && strings.Contains(strings.ToLower(t), f) {
			out = append(out, notes[i:j]...)
			n++
		}
		i = j
	}
	if n == 0 {
		out = append(out, kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlDim, Text: "   nothing in the help matches"}}, w))
	}
	return out
}

// isContinuation reports whether a help line (without its styles) goes
// on with the row above it: blank up to the meaning's column, text after.
func isContinuation(t string) bool {
	const col = 3 + 22
	return len(t) > col && strings.TrimSpace(t[:col]) == "" && strings.TrimSpace(t) != ""
}

// filterKey edits the filter while it is typed (editPrompt, the main
// screen's line editing and limit) and reports whether it took the key:
// keys it does not take (the arrows, pgup/pgdn) scroll.
func (hs *helpScreen) filterKey(msg tea.KeyPressMsg) bool {
	in, what := editPrompt(hs.Filter, msg)
	switch what {
	case promptIgnored:
		return false
	case promptQuit:
		hs.Send(kit.QuitMsg{})
	case promptAccepted, promptClosed:
		hs.typing = false
	case promptCancelled:
		hs.Filter, hs.typing, hs.off = hs.prev, false, 0
	case promptFull:
		hs.Flashf(kit.LvlWarn, PromptFullText())
		fallthrough
	default:
		hs.Filter, hs.off = in, 0
	}
	return true
}
