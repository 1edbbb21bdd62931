package editor

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// edStatusLines is how many rows under the grid say what the plan is,
// what went wrong and what the marks mean; with a history record, one
// more says what the draft would have refused (replay.go).
const edStatusLines = 3

// statusLines is how many rows the status under the grid takes.
func (e *Editor) statusLines() int {
	if e.replayOn() {
		return edStatusLines + 1
	}
	return edStatusLines
}

// edVisible is how many grid rows a page key moves over.
func (e *Editor) edVisible() int {
	return max(e.H-2-e.statusLines()-1, 1)
}

// View draws the open editor in the size SetSize gave: its grid, plan or
// journal.
func (e *Editor) View() []string {
	var rows []string
	switch e.Showing {
	case EdPlan:
		rows = e.viewPlan(e.W, e.H)
	case edJournal:
		rows = e.viewJournal(e.W, e.H)
	case edRefused:
		rows = e.viewRefused(e.W, e.H)
	default:
		rows = e.viewGrid(e.W, e.H)
	}
	for len(rows) < e.H {
		rows = append(rows, "")
	}
	return rows[:e.H]
}

// Footer is the editor's short help (under a flash, which the root puts
// first): the field's keys while one is open, else the view's.
func (e *Editor) Footer(w int) string {
	if e.Input != nil {
		return kit.FooterBeside(e.St, func(w int) string {
			return kit.SpansRow(e.St, []kit.Span{{Lvl: kit.LvlAccent, Text: "enter"}, {Lvl: kit.LvlDim, Text: " set · "}, {Lvl: kit.LvlAccent, Text: "esc"}, {Lvl: kit.LvlDim, Text: " cancel · the field is checked as you type"}}, w)
		}, fieldQuit(), w)
	}
	return e.footerLine(e.Keys.FooterOf(e.Scope(), e.acts), w)
}

// acts says whether act does what its key says now: once the draft is
// lost only leaving, the help, the journal and quitting do (Update
// answers the rest with "you no longer hold the draft"), so the footer
// offers only those; it offered apply, undo and the rest (the tour).
func (e *Editor) acts(act kit.Action) bool {
	return e.Lost == "" || act == kit.ActBack || act == kit.ActHelp || act == ActEdJournal || act == kit.ActQuit
}

// FooterKeep is what the footer keeps beside a flash: help and quit
// (ctrl+c: q is a letter here); while a field takes the keys (? types
// itself), esc to leave it and ctrl+c quit.
func (e *Editor) FooterKeep() []key.Binding {
	if e.Input != nil {
		return append([]key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}, fieldQuit()...)
	}
	return e.Keys.EssentialIn(e.Scope())
}

// footMust: help and quit are the footer's last words, as the main
// screen's short help keeps them: at 40 columns the editor's footer left
// out ctrl+c quit for apply, and q types into a field here.
func footMust(it kit.FootItem) bool { return it.Key == "?" || it.Key == "ctrl+c" || it.Key == "q" }

// fieldQuit is the way out a field's footer keeps (inputKey's ctrl+c).
func fieldQuit() []key.Binding {
	return []key.Binding{key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))}
}

// footerLine draws footer items in their order, leaving out, when the
// line is too narrow for all, the least important first (the highest
// prio, the last of equals), so apply, plan, undo and leaving show at any
// width where they fit at all; help and quit go last of all (footMust).
func (e *Editor) footerLine(items []kit.FootItem, w int) string {
	st := e.St
	itemW := func(it kit.FootItem) int { return kit.Width(it.Key) + 1 + kit.Width(it.Desc) }
	keep := make([]bool, len(items))
	total := -3
	for i, it := range items {
		keep[i] = true
		total += 3 + itemW(it)
	}
	dropped := false
	for {
		need := total
		if dropped {
			need += 1 + kit.Width(st.G.More) // " …"
		}
		if need <= w {
			break
		}
		worst := -1
		for i, it := range items {
			if keep[i] && !footMust(it) && (worst < 0 || it.Prio >= items[worst].Prio) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		keep[worst], dropped = false, true
		total -= 3 + itemW(items[worst])
	}
	l := kit.NewLine(kit.Paint{})
	sepG := " • "
	if st.ASCII {
		sepG = " | "
	}
	first := true
	for i, it := range items {
		if !keep[i] {
			continue
		}
		if l.W+itemW(it)+3 > w && !first {
			break
		}
		if !first {
			l.PutW(st.Border, sepG, 3)
		}
		first = false
		l.Put(st.HelpKey, it.Key)
		l.Gap(1)
		l.Put(st.HelpDesc, it.Desc)
	}
	if dropped && l.W+1+kit.Width(st.G.More) <= w {
		l.Gap(1)
		l.Put(st.Border, st.G.More)
	}
	return kit.ClampLine(l.Finish(w), w)
}

// modeSpans says the draft's mode, with the file's when they differ.
func (e *Editor) modeSpans() []kit.Span {
	p := e.Plan
	if p.ModeFrom == p.ModeTo {
		return append([]kit.Span{{Lvl: kit.LvlDim, Text: "mode "}, {Lvl: kit.LvlPlain, Text: p.ModeTo}, {Lvl: kit.LvlDim, Text: " · "}}, e.formatSpans()...)
	}
	out := []kit.Span{{Lvl: kit.LvlDim, Text: "mode "}, {Lvl: kit.LvlPlain, Text: p.ModeFrom + " " + e.St.G.To + " "}, {Lvl: kit.LvlAccent, Text: p.ModeTo}}
	if p.ModeTo == agentconfig.ModeAutoSplit {
		out = append(out, kit.Span{Lvl: kit.LvlDim, Text: " (preview of the deal)"})
	}
	return append(append(out, kit.Span{Lvl: kit.LvlDim, Text: " · "}), e.formatSpans()...)
}

// titleInfo is the title row's right part: the mode, the draft's size,
// STALE and LOST; short says the draft format in fewer words.
func (e *Editor) titleInfo(short bool) []kit.Span {
	p := e.Plan
	info := e.modeSpans()
	if short && p.DraftFormat {
		info = append(info[:len(info)-1], kit.Span{Lvl: kit.LvlCrit, Text: "BEP-1044 draft: main cannot load it"})
	}
	if n := len(p.Edits); n > 0 {
		info = append(info, kit.Span{Lvl: kit.LvlDim, Text: " · "}, kit.Span{Lvl: kit.LvlAccent, Text: "draft: " + kit.Plural(n, "file change")})
	}
	if e.Stale != "" {
		info = append(info, kit.Span{Lvl: kit.LvlDim, Text: " "}, kit.Span{Lvl: kit.LvlBadge, Text: " STALE "})
	}
	if e.Lost != "" {
		info = append(info, kit.Span{Lvl: kit.LvlDim, Text: " "}, kit.Span{Lvl: kit.LvlBadge, Text: " LOST "})
	}
	return info
}

// formatSpans says the draft's format, and plainly when it is one
// Backend.AI main cannot load (the last span: titleInfo shortens it).
func (e *Editor) formatSpans() []kit.Span {
	p := e.Plan
	if p.DraftFormat {
		return []kit.Span{{Lvl: kit.LvlCrit, Text: agentconfig.DraftFormatWarning}}
	}
	return []kit.Span{{Lvl: kit.LvlDim, Text: string(p.Format)}}
}

// edCols are the grid's column widths.
type edCols struct {
	Label int
	Agent []int
	live  int
}

func (e *Editor) edColumns(w int, shorts []string) edCols {
	c := edCols{Label: min(max(w/5, 16), 26)}
	if e.slotGrid() {
		// A slot's name and the agent after it need a space between them:
		// at 80 columns "cuda.device:10g-mig" was cut to "cuda.device:10g…"
		// and ran into the agent's number ("…1 numa0").
		for _, r := range e.Rows {
			c.Label = max(c.Label, min(kit.Width(string(r.Slot))+1, w/3))
		}
	}
	used := 2 + c.Label
	for i, s := range shorts {
		cw := max(kit.Width(s)+len(strconv.Itoa(i+1))+3, 7)
		c.Agent = append(c.Agent, cw)
		used += cw
	}
	c.live = max(w-used-1, 0)
	return c
}

// viewGrid draws the devices × agents grid, the agents' cpu and mem rows
// and the status lines, in h rows.
func (e *Editor) viewGrid(w, h int) []string {
	st := e.St
	p := e.Plan
	shorts := e.agentShorts()
	cols := e.edColumns(w, shorts)
	// The verdict's reason, whole, takes grid rows (three are kept): beside
	// the field and in the status line it is cut at the screen's edge.
	detail := e.verdictDetail(w)
	status := e.statusLines()
	if keep := max(h-2-status-3, 0); len(detail) > keep {
		detail = detail[:keep]
	}
	visible := max(h-2-status-len(detail), 1)
	if e.Cursor < e.off {
		e.off = e.Cursor
	}
	if e.Cursor >= e.off+visible {
		e.off = e.Cursor - visible + 1
	}
	e.off = min(e.off, max(len(e.Rows)-visible, 0))

	// The title row: the file, then the mode and the draft's size at the
	// right (and the rows' counter when they scroll). The mode matters
	// more than the whole path, but the file's name must stay: where the
	// draft format's words leave it no room they say it shortly.
	counter := 0
	if len(e.Rows) > visible && visible > 0 {
		counter = len(strconv.Itoa(e.off+1)+"-"+strconv.Itoa(min(e.off+visible, len(e.Rows)))+"/"+strconv.Itoa(len(e.Rows))) + 2
	}
	fixed := 1 + kit.Width(" Partition ") + 2 + 1 + 2 + 1 + counter
	var info []kit.Span
	for _, short := range []bool{false, true} {
		info = e.titleInfo(short)
		if w-fixed-kit.SpansWidth(info) >= 12 || !p.DraftFormat {
			break
		}
	}
	room := w - fixed - kit.SpansWidth(info)
	if fixed+kit.SpansWidth(info) > w {
		// Too wide for the row, which drops it: the path takes its room.
		room = w - fixed
	}
	path := p.Config
	if kit.Width(path) > room {
		path = st.G.Ellipsis + kit.TruncateLeft(path, max(room-1, 0))
	}
	if room < 8 {
		path = ""
	}
	out := []string{kit.TitleRowOf(e.St, w, []kit.Span{{Lvl: kit.LvlFocus, Text: " Partition "}, {Lvl: kit.LvlDim, Text: " " + path + " "}}, info, len(e.Rows), visible, e.off)}

	hl := kit.NewLine(kit.Paint{})
	hl.Gap(2)
	if e.slotGrid() {
		hl.Cell(st.Dim, "SLOT", cols.Label, false, st.G.Ellipsis)
		hl.Cell(st.Dim, "AGENT: AMOUNT  of the node · the other agents' · held by its kernels", max(w-hl.W, 0), false, st.G.Ellipsis)
	} else {
		hl.Cell(st.Dim, "DEVICE", cols.Label, false, st.G.Ellipsis)
		for i, s := range shorts {
			hl.Cell(st.Dim, " "+strconv.Itoa(i+1)+" "+s, cols.Agent[i], false, st.G.Ellipsis)
		}
		hl.Gap(1)
		hl.Cell(st.Dim, "LIVE", cols.live, false, st.G.Ellipsis)
	}
	out = append(out, hl.Finish(w))

	stranded := map[model.DeviceKey]bool{}
	for _, m := range p.Moves {
		for _, hd := range m.Holders {
			if hd.Stranded {
				stranded[m.Key] = true
			}
		}
	}
	for i := e.off; i < len(e.Rows) && i < e.off+visible; i++ {
		r := e.Rows[i]
		sel := i == e.Cursor
		switch r.Kind {
		case RowDevice:
			out = append(out, e.gridDeviceRow(r, cols, w, sel, stranded[r.Key]))
		case RowSlot:
			out = append(out, e.gridSlotRow(i, r, shorts, cols, w, sel))
		default:
			out = append(out, e.gridAgentRow(i, r, shorts, cols, w, sel))
		}
	}
	for len(out) < h-status-len(detail) {
		out = append(out, "")
	}
	out = out[:max(h-status-len(detail), 0)]
	for _, sp := range detail {
		out = append(out, kit.SpansRow(e.St, append([]kit.Span{{Lvl: kit.LvlPlain, Text: " "}}, sp...), w))
	}
	return append(out, e.editorStatus(w)...)
}

// verdictDetail is, wrapped to the screen, why the plan would be invalid:
// with the amount being typed (the field's warning), or with the draft as
// it is. nil when the plan is valid or the draft is no longer the user's.
func (e *Editor) verdictDetail(w int) [][]kit.Span {
	var sp []kit.Span
	switch {
	case e.Input != nil:
		if e.InputCheck.Err != nil || e.InputCheck.Warn == "" {
			return nil
		}
		sp = []kit.Span{{Lvl: kit.LvlWarn, Text: e.InputCheck.Warn}}
	case e.Lost == "" && e.Stale == "" && !e.Plan.Valid() && len(e.Plan.Errors) > 0:
		sp = []kit.Span{{Lvl: kit.LvlCrit, Text: FirstLine(e.Plan.Errors[0])}}
	default:
		return nil
	}
	return kit.WrapWords(sp, max(w-2, 1))
}

// gridDeviceRow draws one device: its owners in the draft (marked where
// the draft changes them) and who holds it live.
func (e *Editor) gridDeviceRow(r EdRow, cols edCols, w int, sel, stranded bool) string {
	st := e.St
	l := kit.RowStart(e.St, sel, sel)
	label := partition.Key(r.Key)
	var dr *render.DevRow
	if r.Dev >= 0 && e.data() != nil && r.Dev < len(e.data().Devs) {
		dr = &e.data().Devs[r.Dev]
		label = dr.Label + " " + dr.Abbrev
		if dr.Child {
			label = st.G.Branch + dr.Label
		}
	}
	l.Cell(st.Text, label, cols.Label, false, st.G.Ellipsis)
	for i := range e.Plan.Next.Agents {
		now := e.Plan.Next.Agents[i].OwnsDevice(r.Key)
		was := false
		if ca := e.Plan.Current.Agent(e.Plan.Next.Agents[i].ID); ca != nil {
			was = ca.OwnsDevice(r.Key)
		}
		var p kit.Paint
		mark := st.G.Dot
		switch {
		case now && was:
			p, mark = st.Text, st.G.Owned
		case now:
			p, mark = st.OK, st.G.Gained+st.G.Owned
		case was:
			p, mark = st.Warn, st.G.Lost
		default:
			p = st.Dim
		}
		pad := 1 + len(strconv.Itoa(i+1)) + 1
		l.Gap(pad)
		l.Cell(p, mark, cols.Agent[i]-pad, false, "")
	}
	l.Gap(1)
	var live []kit.Span
	switch {
	case dr == nil:
		live = []kit.Span{{Lvl: kit.LvlWarn, Text: "not on this node"}}
	case len(dr.Kernels) == 0:
		live = []kit.Span{{Lvl: kit.LvlDim, Text: "free"}}
	default:
		counts := map[string]int{}
		var order []string
		for _, ki := range dr.Kernels {
			ag := e.data().Kernels[ki].Agent
			if counts[ag] == 0 {
				order = append(order, ag)
			}
			counts[ag]++
		}
		var who []string
		for _, ag := range order {
			who = append(who, ag+"×"+strconv.Itoa(counts[ag]))
		}
		lvl := kit.LvlPlain
		foreign := !stranded && e.foreignHolders(r.Key, dr)
		if stranded || foreign {
			lvl = kit.LvlCrit
		}
		live = []kit.Span{{Lvl: lvl, Text: dr.Held + "/" + dr.Capacity + " held by " + strings.Join(who, ", ")}}
		switch {
		case stranded:
			live = append(live, kit.Span{Lvl: kit.LvlCrit, Text: " ! moves away from them"})
		case foreign:
			live = append(live, kit.Span{Lvl: kit.LvlCrit, Text: " ! not their agent's device"})
		}
	}
	kit.PutSpans(l, st, live, cols.live)
	return l.Finish(w)
}

// foreignHolders reports whether kernels of an agent that does not own
// the device in the draft hold it: what an apply leaves behind (they run
// on until they end) or a file that disagrees with the kernels.
func (e *Editor) foreignHolders(k model.DeviceKey, dr *render.DevRow) bool {
	next := e.Plan.Next
	if next == nil || !next.Exclusive {
		return false
	}
	for _, ki := range dr.Kernels {
		ap := next.Agent(e.data().Kernels[ki].K.Agent)
		if ap != nil && !ap.OwnsDevice(k) {
			return true
		}
	}
	return false
}

// gridAgentRow draws an agent's cpu or mem, or the field being typed.
func (e *Editor) gridAgentRow(i int, r EdRow, shorts []string, cols edCols, w int, sel bool) string {
	st := e.St
	l := kit.RowStart(e.St, sel, sel)
	what := "cpu"
	if r.Kind == RowMem {
		what = "mem"
	}
	l.Cell(st.Dim, what, 5, false, "")
	l.Cell(st.Text, strconv.Itoa(r.Agent+1)+" "+shorts[r.Agent], max(cols.Label-5, 4), false, st.G.Ellipsis)
	room := w - l.W - 1
	if e.Input != nil && e.inputRow == i {
		// As wide as the text (plus the cursor), so what it means shows
		// right after it.
		e.Input.SetWidth(max(min(room-2, 40, kit.Width(e.Input.Value())+1), 8))
		v := e.Input.View()
		l.PutW(kit.Paint{}, v, kit.Width(v))
		if sp := e.InputCheck.spans(); len(sp) > 0 {
			l.Gap(2)
			kit.PutSpans(l, st, sp, w-l.W)
		}
		return kit.ClampLine(l.Finish(w), w)
	}
	next := &e.Plan.Next.Agents[r.Agent]
	cur := e.Plan.Current.Agent(next.ID)
	var val, was string
	if r.Kind == RowMem {
		val = memText(e.Plan.Next, next)
		if cur != nil && !memAmount(e.Plan.Current, cur).Equal(memAmount(e.Plan.Next, next)) {
			was = memText(e.Plan.Current, cur)
		}
	} else {
		val, was = cpuText(e.Plan, next), ""
		if cur != nil {
			if c := cpuText(e.Plan, cur); c != val {
				was = c
			}
		}
	}
	lvl := kit.LvlPlain
	if was != "" {
		lvl = kit.LvlAccent
	}
	sp := []kit.Span{{Lvl: lvl, Text: val}}
	if was != "" {
		sp = append(sp, kit.Span{Lvl: kit.LvlDim, Text: "  (was " + was + ")"})
	}
	kit.PutSpans(l, st, sp, room)
	return l.Finish(w)
}

// cpuText is an agent's cores as ranges, or its count in the slot-based
// format.
func cpuText(p *partition.Plan, ap *partition.AgentPart) string {
	if p.Format == agentconfig.FormatSlotBased || ap.Owns == nil {
		if c, ok := ap.Capacity[model.SlotCPU]; ok {
			return c.String() + " cores"
		}
		return "every core"
	}
	ids := ap.Owns["cpu"]
	return partition.IDRanges(ids) + "  (" + kit.Plural(len(ids), "core") + ")"
}

// editorStatus is the lines under the grid: the plan in a phrase (or why
// the draft cannot be applied), the last result or the field's error, and
// what the marks mean.
func (e *Editor) editorStatus(w int) []string {
	p := e.Plan
	g := e.St.G
	var first []kit.Span
	switch {
	case e.Lost != "":
		first = []kit.Span{{Lvl: kit.LvlCrit, Text: "You no longer hold the draft: " + e.Lost + ". esc leaves."}}
	case e.Stale != "":
		first = []kit.Span{{Lvl: kit.LvlCrit, Text: "STALE: " + e.Stale}, {Lvl: kit.LvlPlain, Text: " · p reviews the recomputed plan; apply is refused until then"}}
	case !p.Valid():
		first = []kit.Span{{Lvl: kit.LvlCrit, Text: "INVALID under " + p.JudgeLabel() + " (" + kit.Plural(len(p.Errors), "error") + "): " + FirstLine(p.Errors[0])}}
	case !p.Changed():
		first = []kit.Span{{Lvl: kit.LvlDim, Text: "no change: the grid shows agent.toml as it is"}}
	default:
		first = []kit.Span{{Lvl: kit.LvlOK, Text: "valid"}, {Lvl: kit.LvlPlain, Text: " under " + p.JudgeLabel() + ": " + kit.Plural(len(p.Edits), "file change")}}
		if len(p.Affected()) > 0 {
			first = append(first, kit.Span{Lvl: kit.LvlWarn, Text: "; live kernels affected: apply asks for the agent id"})
		}
		if len(p.Warnings) > 0 {
			first = append(first, kit.Span{Lvl: kit.LvlWarn, Text: " · " + kit.Plural(len(p.Warnings), "warning")})
		}
	}
	var second []kit.Span
	if e.Lost == "" && (e.Dirty() || len(e.undo) > 0) {
		second = []kit.Span{{Lvl: kit.LvlPlain, Text: "draft: " + e.changeSummary()}}
		keys := " · u undoes"
		if e.Dirty() {
			keys += ", r resets, p plan"
		}
		if e.Stale == "" && p.Valid() && p.Changed() {
			keys += ", A applies"
		}
		second = append(second, kit.Span{Lvl: kit.LvlDim, Text: keys})
	}
	// A lost draft takes none of the grid's keys (acts): the legend names
	// none then, as the footer does not.
	gridKeys := " · 1-9 or ←/→ move the selected device · m mode · enter edits cpu/mem"
	if e.Lost != "" {
		gridKeys = ""
	}
	legend := []kit.Span{{Lvl: kit.LvlDim, Text: g.Owned + " owner  " + g.Gained + g.Owned + " gains  " + g.Lost + " loses  " + g.Dot + " not its device  ! another agent's kernels on it" + gridKeys}}
	if e.slotGrid() {
		// The keys first: the words after them are in the title and the
		// help too.
		words := "slot-based: amounts per agent and slot; devices are not exclusive"
		if e.Lost == "" {
			words = legendWords(e.legendKeys(), words, w-1, e.St.G.More)
		}
		legend = []kit.Span{{Lvl: kit.LvlDim, Text: words}}
	}
	lines := [][]kit.Span{first, second, legend}
	if rl := e.replayLine(); rl != nil {
		lines = [][]kit.Span{first, rl, second, legend}
	}
	if len(e.result) > 0 {
		// The result (with the backup's path) may take the legend's row too
		// rather than be cut.
		rows := kit.WrapWords(e.withAdvice(e.result[0]), w-1)
		n := len(lines)
		lines[n-2] = rows[0]
		if len(rows) > 1 {
			lines[n-1] = rows[1]
		}
		// A further line (how to undo it) leads the verdict's row while
		// that only says nothing changed, as it does after an apply.
		if e.Lost == "" && e.Stale == "" && p.Valid() && !p.Changed() {
			for _, more := range slices.Backward(e.result[1:]) {
				lines[0] = append(append(slices.Clone(more), kit.Span{Lvl: kit.LvlDim, Text: " · "}), lines[0]...)
			}
		}
	}
	out := make([]string, len(lines))
	for i, sp := range lines {
		out[i] = kit.SpansRow(e.St, append([]kit.Span{{Lvl: kit.LvlPlain, Text: " "}}, sp...), w)
	}
	return out
}

// planLines is the plan as the CLI prints it, coloured: errors first and
// in red, so an invalid draft cannot be missed.
func (e *Editor) planLines() [][]kit.Span {
	p := e.Plan
	var out [][]kit.Span
	if e.Stale != "" {
		out = append(out, []kit.Span{{Lvl: kit.LvlCrit, Text: "STALE: " + e.Stale + ": p reviews and recomputes this plan on the file as it is now"}}, nil)
	}
	if len(p.Errors) > 0 {
		out = append(out, []kit.Span{{Lvl: kit.LvlCrit, Text: "INVALID under " + p.JudgeLabel() + ": " + kit.Plural(len(p.Errors), "error") + "; nothing can be applied"}})
		for _, e := range p.Errors {
			for _, ln := range strings.Split(e, "\n") {
				out = append(out, []kit.Span{{Lvl: kit.LvlCrit, Text: "  " + ln}})
			}
		}
		out = append(out, nil)
	}
	var b bytes.Buffer
	_ = p.WriteText(&b)
	section := ""
	for _, ln := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		lvl := kit.LvlPlain
		trimmed := strings.TrimSpace(ln)
		switch {
		case ln != "" && !strings.HasPrefix(ln, " ") && strings.HasSuffix(ln, ":") || strings.HasSuffix(ln, "):"):
			section = strings.Fields(ln)[0]
			lvl = kit.LvlTitle
		case strings.HasPrefix(trimmed, "+ "):
			lvl = kit.LvlOK
		case strings.HasPrefix(trimmed, "- "):
			lvl = kit.LvlWarn
		case strings.HasPrefix(ln, "INVALID"):
			lvl = kit.LvlCrit
		case strings.HasPrefix(ln, "valid"):
			lvl = kit.LvlOK
			if strings.Contains(ln, "live kernels") {
				lvl = kit.LvlWarn
			}
		case strings.Contains(ln, "<- its agent no longer owns"):
			lvl = kit.LvlCrit
		case section == "errors" && ln != "":
			lvl = kit.LvlCrit
		case section == "warnings" && ln != "":
			lvl = kit.LvlWarn
		case section == "notes" && ln != "":
			lvl = kit.LvlDim
		}
		switch {
		case strings.HasPrefix(ln, "valid as far as it was checked"):
			// The console's apply dialog lists what was not checked
			// above its Cancel; only live kernels ask for an id.
			lvl = kit.LvlWarn
			ln = strings.ReplaceAll(ln, "apply needs --force", "the apply dialog lists it")
		case strings.HasPrefix(ln, "valid") || strings.HasPrefix(ln, "INVALID") || ln == "no change":
			ln = strings.ReplaceAll(ln, "apply needs --force", "apply asks for the affected agent's id")
		}
		if strings.HasPrefix(ln, "valid") || strings.HasPrefix(ln, "INVALID") {
			ln += " · judged by " + p.JudgeLabel()
		}
		out = append(out, []kit.Span{{Lvl: lvl, Text: ln}})
	}
	return out
}

// viewPlan draws the scrollable plan in h rows.
func (e *Editor) viewPlan(w, h int) []string {
	var body []string
	for _, sp := range e.planLines() {
		rows := kit.WrapWords(sp, w-2)
		// A wrapped "+ [...]" or "- [...]" keeps its marker on every row, so
		// a continuation is not read as context.
		mark := ""
		if len(sp) == 1 {
			if t := strings.TrimLeft(sp[0].Text, " "); strings.HasPrefix(t, "+ ") || strings.HasPrefix(t, "- ") {
				mark = t[:1]
			}
		}
		for i, row := range rows {
			if i > 0 && mark != "" && len(row) > 0 {
				row = append([]kit.Span{{Lvl: row[0].Lvl, Text: "  " + mark + " "}}, row[1:]...)
				row[0].Lvl = sp[0].Lvl
			}
			body = append(body, kit.SpansRow(e.St, append([]kit.Span{{Lvl: kit.LvlPlain, Text: " "}}, row...), w))
		}
	}
	visible := max(h-1, 0)
	e.planOff = min(e.planOff, max(len(body)-visible, 0))
	title := []kit.Span{{Lvl: kit.LvlFocus, Text: " Plan "}}
	if e.Stale != "" {
		title = append(title, kit.Span{Lvl: kit.LvlDim, Text: " "}, kit.Span{Lvl: kit.LvlBadge, Text: " STALE "})
	}
	out := []string{kit.TitleRowOf(e.St, w, title, []kit.Span{{Lvl: kit.LvlDim, Text: "A apply · esc back"}}, len(body), visible, e.planOff)}
	for i := e.planOff; i < len(body) && len(out) < h; i++ {
		out = append(out, body[i])
	}
	return out
}

// viewJournal draws the last journal records, newest first.
func (e *Editor) viewJournal(w, h int) []string {
	st := e.St
	var body []string
	row := func(sp ...kit.Span) {
		body = append(body, kit.SpansRow(st, append([]kit.Span{{Lvl: kit.LvlPlain, Text: " "}}, sp...), w))
	}
	for _, sp := range JournalRows(e.St, JournalView{Recs: e.journal, What: e.journalWhat, Bad: e.journalBad, Err: e.journalErr, Path: e.Desk.JournalPath()}) {
		row(sp...)
	}
	if _, ok := e.Desk.LastWrite(); ok || len(e.journal) > 0 {
		body = append(body, "")
		for _, r := range kit.WrapWords([]kit.Span{{Lvl: kit.LvlWarn, Text: "The agents read agent.toml only at start-up: a change takes effect when they restart."}}, w-1) {
			row(r...)
		}
	}
	// How to undo, and what the last U said, stay under the title however
	// far the list scrolls.
	var head []string
	for _, n := range e.undoNote {
		// Wrapped, not cut: at 80 columns the cut fell before "no restart
		// needed", the answer the operator rolled back for, and in the
		// middle of the command that rolls back with --force.
		for _, r := range kit.WrapWords(e.withAdvice(n), w-1) {
			head = append(head, kit.SpansRow(st, append([]kit.Span{{Lvl: kit.LvlPlain, Text: " "}}, r...), w))
		}
	}
	if len(e.journal) > 0 {
		undo := []kit.Span{{Lvl: kit.LvlPlain, Text: " "}, {Lvl: kit.LvlAccent, Text: "U"}, {Lvl: kit.LvlDim, Text: " undoes the last apply · or on the node: "}}
		cmd := kit.Span{Lvl: kit.LvlAccent, Text: RollbackCommand(e.Desk.Path())}
		if kit.SpansWidth(undo)+kit.SpansWidth([]kit.Span{cmd}) <= w {
			head = append(head, kit.SpansRow(st, append(undo, cmd), w))
		} else {
			// The command on a row of its own, so that it is whole, to
			// paste in a shell, where both do not fit (at 80 columns even
			// /etc/backend.ai/agent.toml's was cut).
			head = append(head, kit.SpansRow(st, undo, w), kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlPlain, Text: "   "}, cmd}, w))
		}
	}
	visible := max(h-1-len(head), 0)
	e.jourOff = min(e.jourOff, max(len(body)-visible, 0))
	out := []string{kit.TitleRowOf(e.St, w, []kit.Span{{Lvl: kit.LvlFocus, Text: " Journal "}, {Lvl: kit.LvlDim, Text: " " + e.Desk.JournalPath() + " "}},
		[]kit.Span{{Lvl: kit.LvlDim, Text: "newest first · U undo · esc back"}}, len(body), visible, e.jourOff)}
	out = append(out, head...)
	for i := e.jourOff; i < len(body) && len(out) < h; i++ {
		out = append(out, body[i])
	}
	return out
}

// ShortHash is a config hash shortened for the screen.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}

// JournalView is what JournalRows lists: the journal's last records,
// newest first, what each changed (journalChanges), how many lines could
// not be read, or why the journal could not be.
type JournalView struct {
	Recs []agentconfig.JournalRecord
	What []string
	Bad  int
	Err  string
	Path string
}

// JournalRows are the journal's rows as the editor's journal view and the
// console's read-only :journal list them: a header, then per record its
// time, action, result, actor, origin and hashes, what it changed, its
// backup and any mismatch.
func JournalRows(st *kit.Styles, v JournalView) [][]kit.Span {
	var out [][]kit.Span
	row := func(sp ...kit.Span) { out = append(out, sp) }
	switch {
	case v.Err != "":
		row(kit.Span{Lvl: kit.LvlCrit, Text: v.Err})
	case len(v.Recs) == 0:
		row(kit.Span{Lvl: kit.LvlDim, Text: "nothing applied yet: the journal " + v.Path + " is empty"})
	default:
		row(kit.Span{Lvl: kit.LvlDim, Text: kit.PadRight("TIME", 20) + kit.PadRight("ACTION", 9) + kit.PadRight("RESULT", 9) + kit.PadRight("ACTOR", 12) + kit.PadRight("OLD "+st.G.To+" NEW", 28) + "ORIGIN"})
	}
	for i, r := range v.Recs {
		res := kit.Span{Lvl: kit.LvlOK, Text: kit.PadRight(r.Result, 9)}
		if r.Result != "ok" {
			res.Lvl = kit.LvlCrit
		}
		extra := ""
		if r.Forced {
			extra = "  forced"
		}
		action := r.Action
		if r.Action == agentconfig.ActionFailed && r.Intends != "" {
			// "apply  failed": what was tried, and that it did not happen.
			action = r.Intends
		}
		row(kit.Span{Lvl: kit.LvlPlain, Text: kit.PadRight(r.Time.Local().Format("2006-01-02 15:04:05"), 20)}, kit.Span{Lvl: kit.LvlAccent, Text: kit.PadRight(action, 9)}, res,
			// Columns end in a space even when full: an SSH origin (address
			// and key fingerprint, ~70 cells) ran into the hashes after it
			// ("…T/yc64687688c6ca"), and the editor's narrower view cut the
			// hashes off. The origin, of no fixed width, comes last.
			// (Up to the hashes a row fits 80 columns.)
			kit.Span{Lvl: kit.LvlPlain, Text: kit.PadRight(r.Actor, 11) + " "},
			kit.Span{Lvl: kit.LvlPlain, Text: kit.PadRight(ShortHash(r.OldHash)+" "+st.G.To+" "+ShortHash(r.NewHash), 27) + " "},
			kit.Span{Lvl: kit.LvlDim, Text: r.Origin}, kit.Span{Lvl: kit.LvlWarn, Text: extra})
		if i < len(v.What) && v.What[i] != "" {
			row(kit.Span{Lvl: kit.LvlDim, Text: "    " + strings.ReplaceAll(v.What[i], " -> ", " "+st.G.To+" ")})
		}
		if r.Action == agentconfig.ActionFailed {
			row(kit.Span{Lvl: kit.LvlCrit, Text: "    nothing written: " + cmp.Or(r.Failure, "the write failed before it replaced the file")})
		}
		if r.Backup != "" {
			row(kit.Span{Lvl: kit.LvlDim, Text: "    backup " + r.Backup})
		}
		for _, m := range r.Mismatch {
			row(kit.Span{Lvl: kit.LvlCrit, Text: "    mismatch: " + m})
		}
	}
	if v.Bad > 0 {
		row(kit.Span{Lvl: kit.LvlWarn, Text: kit.Plural(v.Bad, "journal line") + " could not be read (torn writes)"})
	}
	return out
}

// legendWords is the slot grid's legend in w cells: its keys, then words
// (which the edge may cut: the title and the help say them too). Keys
// that do not fit whole are left out, marked more, as a footer leaves
// them: the edge cut one in the middle at 80 columns ("r reset d…").
func legendWords(keys []kit.FootItem, words string, w int, more string) string {
	if all := keysText(keys, " · ") + " · " + words; kit.Width(keysText(keys, " · ")) <= w {
		return all
	}
	out := ""
	for _, it := range keys {
		next := it.Key + " " + it.Desc
		if out != "" {
			next = out + " · " + next
		}
		if kit.Width(next+" · "+more) > w {
			break
		}
		out = next
	}
	if out == "" {
		return more
	}
	return out + " · " + more
}
