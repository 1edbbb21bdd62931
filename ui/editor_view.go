package ui

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
)

// edStatusLines is how many rows under the grid say what the plan is,
// what went wrong and what the marks mean.
const edStatusLines = 3

// edVisible is how many grid rows a page key moves over.
func (e *editor) edVisible() int {
	return max(e.h-2-edStatusLines-1, 1)
}

// View draws the open editor in the size SetSize gave: its grid, plan or
// journal.
func (e *editor) View() []string {
	var rows []string
	switch e.view {
	case edPlan:
		rows = e.viewPlan(e.w, e.h)
	case edJournal:
		rows = e.viewJournal(e.w, e.h)
	default:
		rows = e.viewGrid(e.w, e.h)
	}
	for len(rows) < e.h {
		rows = append(rows, "")
	}
	return rows[:e.h]
}

// footer is the editor's short help (under a flash, which the root puts
// first): the field's keys while one is open, else the view's.
func (e *editor) footer(w int) string {
	if e.input != nil {
		return spansRow(e.st, []span{{lvlAccent, "enter"}, {lvlDim, " set · "}, {lvlAccent, "esc"}, {lvlDim, " cancel · the field is checked as you type"}}, w)
	}
	return e.footerLine(e.keys.footerIn(e.scope()), w)
}

// footerLine draws footer items in their order, leaving out, when the
// line is too narrow for all, the least important first (the highest
// prio, the last of equals), so apply, plan, undo and leaving show at any
// width where they fit at all.
func (e *editor) footerLine(items []footItem, w int) string {
	st := e.st
	itemW := func(it footItem) int { return width(it.key) + 1 + width(it.desc) }
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
			need += 2 // " …"
		}
		if need <= w {
			break
		}
		worst := -1
		for i, it := range items {
			if keep[i] && (worst < 0 || it.prio >= items[worst].prio) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		keep[worst], dropped = false, true
		total -= 3 + itemW(items[worst])
	}
	l := newLine(paint{})
	sepG := " • "
	if st.ASCII {
		sepG = " | "
	}
	first := true
	for i, it := range items {
		if !keep[i] {
			continue
		}
		if l.w+itemW(it)+3 > w && !first {
			break
		}
		if !first {
			l.putW(st.Border, sepG, 3)
		}
		first = false
		l.put(st.HelpKey, it.key)
		l.gap(1)
		l.put(st.HelpDesc, it.desc)
	}
	if dropped && l.w+2 <= w {
		l.gap(1)
		l.put(st.Border, st.G.Ellipsis)
	}
	return clampLine(l.finish(w), w)
}

// modeSpans says the draft's mode, with the file's when they differ.
func (e *editor) modeSpans() []span {
	p := e.plan
	if p.ModeFrom == p.ModeTo {
		return append([]span{{lvlDim, "mode "}, {lvlPlain, p.ModeTo}, {lvlDim, " · "}}, e.formatSpans()...)
	}
	out := []span{{lvlDim, "mode "}, {lvlPlain, p.ModeFrom + " → "}, {lvlAccent, p.ModeTo}}
	if p.ModeTo == agentconfig.ModeAutoSplit {
		out = append(out, span{lvlDim, " (preview of the deal)"})
	}
	return append(append(out, span{lvlDim, " · "}), e.formatSpans()...)
}

// formatSpans says the draft's format, and plainly when it is one
// Backend.AI main cannot load.
func (e *editor) formatSpans() []span {
	p := e.plan
	if p.DraftFormat {
		return []span{{lvlCrit, agentconfig.DraftFormatWarning}}
	}
	return []span{{lvlDim, string(p.Format)}}
}

// edCols are the grid's column widths.
type edCols struct {
	label int
	agent []int
	live  int
}

func (e *editor) edColumns(w int, shorts []string) edCols {
	c := edCols{label: min(max(w/5, 16), 26)}
	used := 2 + c.label
	for i, s := range shorts {
		cw := max(width(s)+len(strconv.Itoa(i+1))+3, 7)
		c.agent = append(c.agent, cw)
		used += cw
	}
	c.live = max(w-used-1, 0)
	return c
}

// viewGrid draws the devices × agents grid, the agents' cpu and mem rows
// and the status lines, in h rows.
func (e *editor) viewGrid(w, h int) []string {
	st := e.st
	p := e.plan
	shorts := e.agentShorts()
	cols := e.edColumns(w, shorts)
	visible := max(h-2-edStatusLines, 1)
	if e.cursor < e.off {
		e.off = e.cursor
	}
	if e.cursor >= e.off+visible {
		e.off = e.cursor - visible + 1
	}
	e.off = min(e.off, max(len(e.rows)-visible, 0))

	info := e.modeSpans()
	if n := len(p.Edits); n > 0 {
		info = append(info, span{lvlDim, " · "}, span{lvlAccent, "draft: " + plural(n, "file change")})
	}
	if e.stale != "" {
		info = append(info, span{lvlDim, " "}, span{lvlBadge, " STALE "})
	}
	if e.lost != "" {
		info = append(info, span{lvlDim, " "}, span{lvlBadge, " LOST "})
	}
	// The mode and the draft's size matter more than the whole path: the
	// path keeps its end.
	room := w - spansWidth(info) - 30
	path := p.Config
	if width(path) > room {
		path = st.G.Ellipsis + truncateLeft(path, max(room-1, 0))
	}
	if room < 8 {
		path = ""
	}
	out := []string{titleRowOf(e.st, w, []span{{lvlFocus, " Partition "}, {lvlDim, " " + path + " "}}, info, len(e.rows), visible, e.off)}

	hl := newLine(paint{})
	hl.gap(2)
	hl.cell(st.Dim, "DEVICE", cols.label, false, st.G.Ellipsis)
	for i, s := range shorts {
		hl.cell(st.Dim, " "+strconv.Itoa(i+1)+" "+s, cols.agent[i], false, st.G.Ellipsis)
	}
	hl.gap(1)
	hl.cell(st.Dim, "LIVE", cols.live, false, st.G.Ellipsis)
	out = append(out, hl.finish(w))

	stranded := map[model.DeviceKey]bool{}
	for _, m := range p.Moves {
		for _, hd := range m.Holders {
			if hd.Stranded {
				stranded[m.Key] = true
			}
		}
	}
	for i := e.off; i < len(e.rows) && i < e.off+visible; i++ {
		r := e.rows[i]
		sel := i == e.cursor
		switch r.kind {
		case rowDevice:
			out = append(out, e.gridDeviceRow(r, cols, w, sel, stranded[r.key]))
		default:
			out = append(out, e.gridAgentRow(i, r, shorts, cols, w, sel))
		}
	}
	for len(out) < h-edStatusLines {
		out = append(out, "")
	}
	out = out[:max(h-edStatusLines, 0)]
	return append(out, e.editorStatus(w)...)
}

// gridDeviceRow draws one device: its owners in the draft (marked where
// the draft changes them) and who holds it live.
func (e *editor) gridDeviceRow(r edRow, cols edCols, w int, sel, stranded bool) string {
	st := e.st
	l := rowStart(e.st, sel, sel)
	label := partition.Key(r.key)
	var dr *devRow
	if r.dev >= 0 && e.data() != nil && r.dev < len(e.data().devs) {
		dr = &e.data().devs[r.dev]
		label = dr.label + " " + dr.abbrev
		if dr.child {
			label = st.G.Branch + dr.label
		}
	}
	l.cell(st.Text, label, cols.label, false, st.G.Ellipsis)
	for i := range e.plan.Next.Agents {
		now := e.plan.Next.Agents[i].OwnsDevice(r.key)
		was := false
		if ca := e.plan.Current.Agent(e.plan.Next.Agents[i].ID); ca != nil {
			was = ca.OwnsDevice(r.key)
		}
		var p paint
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
		l.gap(pad)
		l.cell(p, mark, cols.agent[i]-pad, false, "")
	}
	l.gap(1)
	var live []span
	switch {
	case dr == nil:
		live = []span{{lvlWarn, "not on this node"}}
	case len(dr.kernels) == 0:
		live = []span{{lvlDim, "free"}}
	default:
		counts := map[string]int{}
		var order []string
		for _, ki := range dr.kernels {
			ag := e.data().kernels[ki].agent
			if counts[ag] == 0 {
				order = append(order, ag)
			}
			counts[ag]++
		}
		var who []string
		for _, ag := range order {
			who = append(who, ag+"×"+strconv.Itoa(counts[ag]))
		}
		lvl := lvlPlain
		foreign := !stranded && e.foreignHolders(r.key, dr)
		if stranded || foreign {
			lvl = lvlCrit
		}
		live = []span{{lvl, dr.held + "/" + dr.capacity + " held by " + strings.Join(who, ", ")}}
		switch {
		case stranded:
			live = append(live, span{lvlCrit, " ! moves away from them"})
		case foreign:
			live = append(live, span{lvlCrit, " ! not their agent's device"})
		}
	}
	putSpans(l, st, live, cols.live)
	return l.finish(w)
}

// foreignHolders reports whether kernels of an agent that does not own
// the device in the draft hold it: what an apply leaves behind (they run
// on until they end) or a file that disagrees with the kernels.
func (e *editor) foreignHolders(k model.DeviceKey, dr *devRow) bool {
	next := e.plan.Next
	if next == nil || !next.Exclusive {
		return false
	}
	for _, ki := range dr.kernels {
		ap := next.Agent(e.data().kernels[ki].k.Agent)
		if ap != nil && !ap.OwnsDevice(k) {
			return true
		}
	}
	return false
}

// gridAgentRow draws an agent's cpu or mem, or the field being typed.
func (e *editor) gridAgentRow(i int, r edRow, shorts []string, cols edCols, w int, sel bool) string {
	st := e.st
	l := rowStart(e.st, sel, sel)
	what := "cpu"
	if r.kind == rowMem {
		what = "mem"
	}
	l.cell(st.Dim, what, 5, false, "")
	l.cell(st.Text, strconv.Itoa(r.agent+1)+" "+shorts[r.agent], max(cols.label-5, 4), false, st.G.Ellipsis)
	room := w - l.w - 1
	if e.input != nil && e.inputRow == i {
		// As wide as the text (plus the cursor), so what it means shows
		// right after it.
		e.input.SetWidth(max(min(room-2, 40, width(e.input.Value())+1), 8))
		v := e.input.View()
		l.putW(paint{}, v, width(v))
		if sp := e.inputCheck.spans(); len(sp) > 0 {
			l.gap(2)
			putSpans(l, st, sp, w-l.w)
		}
		return clampLine(l.finish(w), w)
	}
	next := &e.plan.Next.Agents[r.agent]
	cur := e.plan.Current.Agent(next.ID)
	var val, was string
	if r.kind == rowMem {
		val = memOrNone(next.Mem)
		if cur != nil && !cur.Mem.Equal(next.Mem) {
			was = memOrNone(cur.Mem)
		}
	} else {
		val, was = cpuText(e.plan, next), ""
		if cur != nil {
			if c := cpuText(e.plan, cur); c != val {
				was = c
			}
		}
	}
	lvl := lvlPlain
	if was != "" {
		lvl = lvlAccent
	}
	sp := []span{{lvl, val}}
	if was != "" {
		sp = append(sp, span{lvlDim, "  (was " + was + ")"})
	}
	putSpans(l, st, sp, room)
	return l.finish(w)
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
	return partition.IDRanges(ids) + "  (" + plural(len(ids), "core") + ")"
}

// editorStatus is the lines under the grid: the plan in a phrase (or why
// the draft cannot be applied), the last result or the field's error, and
// what the marks mean.
func (e *editor) editorStatus(w int) []string {
	p := e.plan
	g := e.st.G
	var first []span
	switch {
	case e.lost != "":
		first = []span{{lvlCrit, "You no longer hold the draft: " + e.lost + ". esc leaves."}}
	case e.stale != "":
		first = []span{{lvlCrit, "STALE: " + e.stale}, {lvlPlain, " · p reviews the recomputed plan; apply is refused until then"}}
	case !p.Valid():
		first = []span{{lvlCrit, "INVALID (" + plural(len(p.Errors), "error") + "): " + firstLine(p.Errors[0])}}
	case !p.Changed():
		first = []span{{lvlDim, "no change: the grid shows agent.toml as it is"}}
	default:
		first = []span{{lvlOK, "valid"}, {lvlPlain, ": " + plural(len(p.Edits), "file change")}}
		if len(p.Affected()) > 0 {
			first = append(first, span{lvlWarn, "; live kernels affected: apply asks for the agent id"})
		}
		if len(p.Warnings) > 0 {
			first = append(first, span{lvlWarn, " · " + plural(len(p.Warnings), "warning")})
		}
	}
	var second []span
	if e.lost == "" && (e.dirty() || len(e.undo) > 0) {
		second = []span{{lvlPlain, "draft: " + e.changeSummary()}}
		keys := " · u undoes"
		if e.dirty() {
			keys += ", r resets, p plan"
		}
		if e.stale == "" && p.Valid() && p.Changed() {
			keys += ", A applies"
		}
		second = append(second, span{lvlDim, keys})
	}
	legend := []span{{lvlDim, g.Owned + " owner  " + g.Gained + g.Owned + " gains  " + g.Lost + " loses  " + g.Dot + " not its device  ! another agent's kernels on it · 1-9 or ←/→ move the selected device · m mode · enter edits cpu/mem"}}
	lines := [][]span{first, second, legend}
	if e.result != nil {
		// The result (with the backup's path) may take the legend's row too
		// rather than be cut.
		rows := wrapWords(e.result, w-1)
		lines[1] = rows[0]
		if len(rows) > 1 {
			lines[2] = rows[1]
		}
	}
	out := make([]string, len(lines))
	for i, sp := range lines {
		out[i] = spansRow(e.st, append([]span{{lvlPlain, " "}}, sp...), w)
	}
	return out
}

// planLines is the plan as the CLI prints it, coloured: errors first and
// in red, so an invalid draft cannot be missed.
func (e *editor) planLines() [][]span {
	p := e.plan
	var out [][]span
	if e.stale != "" {
		out = append(out, []span{{lvlCrit, "STALE: " + e.stale + ": p reviews and recomputes this plan on the file as it is now"}}, nil)
	}
	if len(p.Errors) > 0 {
		out = append(out, []span{{lvlCrit, "INVALID: " + plural(len(p.Errors), "error") + "; nothing can be applied"}})
		for _, e := range p.Errors {
			for _, ln := range strings.Split(e, "\n") {
				out = append(out, []span{{lvlCrit, "  " + ln}})
			}
		}
		out = append(out, nil)
	}
	var b bytes.Buffer
	_ = p.WriteText(&b)
	section := ""
	for _, ln := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		lvl := lvlPlain
		trimmed := strings.TrimSpace(ln)
		switch {
		case ln != "" && !strings.HasPrefix(ln, " ") && strings.HasSuffix(ln, ":") || strings.HasSuffix(ln, "):"):
			section = strings.Fields(ln)[0]
			lvl = lvlTitle
		case strings.HasPrefix(trimmed, "+ "):
			lvl = lvlOK
		case strings.HasPrefix(trimmed, "- "):
			lvl = lvlWarn
		case strings.HasPrefix(ln, "INVALID"):
			lvl = lvlCrit
		case strings.HasPrefix(ln, "valid"):
			lvl = lvlOK
			if strings.Contains(ln, "live kernels") {
				lvl = lvlWarn
			}
		case strings.Contains(ln, "<- its agent no longer owns"):
			lvl = lvlCrit
		case section == "errors" && ln != "":
			lvl = lvlCrit
		case section == "warnings" && ln != "":
			lvl = lvlWarn
		case section == "notes" && ln != "":
			lvl = lvlDim
		}
		if strings.HasPrefix(ln, "valid") || strings.HasPrefix(ln, "INVALID") || ln == "no change" {
			ln = strings.ReplaceAll(ln, "apply needs --force", "apply asks for the affected agent's id")
		}
		out = append(out, []span{{lvl, ln}})
	}
	return out
}

// viewPlan draws the scrollable plan in h rows.
func (e *editor) viewPlan(w, h int) []string {
	var body []string
	for _, sp := range e.planLines() {
		rows := wrapWords(sp, w-2)
		// A wrapped "+ [...]" or "- [...]" keeps its marker on every row, so
		// a continuation is not read as context.
		mark := ""
		if len(sp) == 1 {
			if t := strings.TrimLeft(sp[0].text, " "); strings.HasPrefix(t, "+ ") || strings.HasPrefix(t, "- ") {
				mark = t[:1]
			}
		}
		for i, row := range rows {
			if i > 0 && mark != "" && len(row) > 0 {
				row = append([]span{{row[0].lvl, "  " + mark + " "}}, row[1:]...)
				row[0].lvl = sp[0].lvl
			}
			body = append(body, spansRow(e.st, append([]span{{lvlPlain, " "}}, row...), w))
		}
	}
	visible := max(h-1, 0)
	e.planOff = min(e.planOff, max(len(body)-visible, 0))
	title := []span{{lvlFocus, " Plan "}}
	if e.stale != "" {
		title = append(title, span{lvlDim, " "}, span{lvlBadge, " STALE "})
	}
	out := []string{titleRowOf(e.st, w, title, []span{{lvlDim, "A apply · esc back"}}, len(body), visible, e.planOff)}
	for i := e.planOff; i < len(body) && len(out) < h; i++ {
		out = append(out, body[i])
	}
	return out
}

// viewJournal draws the last journal records, newest first.
func (e *editor) viewJournal(w, h int) []string {
	st := e.st
	var body []string
	row := func(sp ...span) { body = append(body, spansRow(st, append([]span{{lvlPlain, " "}}, sp...), w)) }
	switch {
	case e.journalErr != "":
		row(span{lvlCrit, e.journalErr})
	case len(e.journal) == 0:
		row(span{lvlDim, "nothing applied yet: the journal " + e.desk.JournalPath() + " is empty"})
	default:
		row(span{lvlDim, padRight("TIME", 20) + padRight("ACTION", 9) + padRight("RESULT", 9) + padRight("ACTOR", 14) + padRight("ORIGIN", 22) + "OLD → NEW"})
	}
	for _, r := range e.journal {
		res := span{lvlOK, padRight(r.Result, 9)}
		if r.Result != "ok" {
			res.lvl = lvlCrit
		}
		extra := ""
		if r.Forced {
			extra = "  forced"
		}
		row(span{lvlPlain, padRight(r.Time.Local().Format("2006-01-02 15:04:05"), 20)}, span{lvlAccent, padRight(r.Action, 9)}, res,
			span{lvlPlain, padRight(r.Actor, 14)}, span{lvlDim, padRight(r.Origin, 22)},
			span{lvlPlain, shortHash(r.OldHash) + " → " + shortHash(r.NewHash)}, span{lvlWarn, extra})
		for _, m := range r.Mismatch {
			row(span{lvlCrit, "    mismatch: " + m})
		}
	}
	if e.journalBad > 0 {
		row(span{lvlWarn, plural(e.journalBad, "journal line") + " could not be read (torn writes)"})
	}
	if _, ok := e.desk.LastWrite(); ok || len(e.journal) > 0 {
		body = append(body, "")
		row(span{lvlWarn, "The agents read agent.toml only at start-up: a change takes effect when they restart."})
	}
	visible := max(h-1, 0)
	e.jourOff = min(e.jourOff, max(len(body)-visible, 0))
	out := []string{titleRowOf(e.st, w, []span{{lvlFocus, " Journal "}, {lvlDim, " " + e.desk.JournalPath() + " "}},
		[]span{{lvlDim, "newest first · esc back"}}, len(body), visible, e.jourOff)}
	for i := e.jourOff; i < len(body) && len(out) < h; i++ {
		out = append(out, body[i])
	}
	return out
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}
