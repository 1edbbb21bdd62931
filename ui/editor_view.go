package ui

import (
	"bytes"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
)

// edStatusLines is how many rows under the grid say what the plan is,
// what went wrong and what the marks mean.
const edStatusLines = 3

// edVisible is how many grid rows fit.
func (a *App) edVisible() int {
	w, h := a.size()
	return max(h-len(a.viewHeader(w))-2-1-edStatusLines-1, 1)
}

// viewEditor draws the open editor: its grid, plan or journal.
func (a *App) viewEditor(w, h int) []string {
	rows := a.viewHeader(w)
	var body []string
	switch a.ed.view {
	case edPlan:
		body = a.viewPlan(w, h-len(rows)-1)
	case edJournal:
		body = a.viewJournal(w, h-len(rows)-1)
	default:
		body = a.viewGrid(w, h-len(rows)-1)
	}
	rows = append(rows, body...)
	for len(rows) < h-1 {
		rows = append(rows, "")
	}
	rows = append(rows[:h-1], a.viewEditorFooter(w))
	if a.dlg != nil {
		rows = a.overlayDialog(rows, w, h)
	}
	return rows
}

// viewEditorFooter is the flash, else the editor's short help.
func (a *App) viewEditorFooter(w int) string {
	if a.flash.text != "" {
		l := newLine(paint{})
		putSpans(l, a.st, []span{{a.flash.lvl, a.flash.text}}, w)
		return l.finish(w)
	}
	sc := scEditor
	switch {
	case a.ed.input != nil:
		return spansRow(a.st, []span{{lvlAccent, "enter"}, {lvlDim, " set · "}, {lvlAccent, "esc"}, {lvlDim, " cancel · the field is checked as you type"}}, w)
	case a.ed.view == edPlan:
		sc = scPlan
	case a.ed.view == edJournal:
		sc = scJournal
	}
	return a.footerLine(a.keys.footerIn(sc), w)
}

// footerLine draws footer items in their order, leaving out, when the
// line is too narrow for all, the least important first (the highest
// prio, the last of equals), so apply, plan, undo and leaving show at any
// width where they fit at all.
func (a *App) footerLine(items []footItem, w int) string {
	st := a.st
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
func (ed *editor) modeSpans() []span {
	p := ed.plan
	if p.ModeFrom == p.ModeTo {
		return append([]span{{lvlDim, "mode "}, {lvlPlain, p.ModeTo}, {lvlDim, " · "}}, ed.formatSpans()...)
	}
	out := []span{{lvlDim, "mode "}, {lvlPlain, p.ModeFrom + " → "}, {lvlAccent, p.ModeTo}}
	if p.ModeTo == agentconfig.ModeAutoSplit {
		out = append(out, span{lvlDim, " (preview of the deal)"})
	}
	return append(append(out, span{lvlDim, " · "}), ed.formatSpans()...)
}

// formatSpans says the draft's format, and plainly when it is one
// Backend.AI main cannot load.
func (ed *editor) formatSpans() []span {
	p := ed.plan
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

func (a *App) edColumns(w int, shorts []string) edCols {
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
func (a *App) viewGrid(w, h int) []string {
	st := a.st
	ed := a.ed
	p := ed.plan
	shorts := ed.agentShorts()
	cols := a.edColumns(w, shorts)
	visible := max(h-2-edStatusLines, 1)
	if ed.cursor < ed.off {
		ed.off = ed.cursor
	}
	if ed.cursor >= ed.off+visible {
		ed.off = ed.cursor - visible + 1
	}
	ed.off = min(ed.off, max(len(ed.rows)-visible, 0))

	info := ed.modeSpans()
	if n := len(p.Edits); n > 0 {
		info = append(info, span{lvlDim, " · "}, span{lvlAccent, "draft: " + plural(n, "file change")})
	}
	if ed.stale != "" {
		info = append(info, span{lvlDim, " "}, span{lvlBadge, " STALE "})
	}
	if ed.lost != "" {
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
	out := []string{a.titleRow(w, []span{{lvlFocus, " Partition "}, {lvlDim, " " + path + " "}}, info, len(ed.rows), visible, ed.off)}

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
	for i := ed.off; i < len(ed.rows) && i < ed.off+visible; i++ {
		r := ed.rows[i]
		sel := i == ed.cursor
		switch r.kind {
		case rowDevice:
			out = append(out, a.gridDeviceRow(r, cols, w, sel, stranded[r.key]))
		default:
			out = append(out, a.gridAgentRow(i, r, shorts, cols, w, sel))
		}
	}
	for len(out) < h-edStatusLines {
		out = append(out, "")
	}
	out = out[:h-edStatusLines]
	return append(out, a.editorStatus(w)...)
}

// gridDeviceRow draws one device: its owners in the draft (marked where
// the draft changes them) and who holds it live.
func (a *App) gridDeviceRow(r edRow, cols edCols, w int, sel, stranded bool) string {
	st := a.st
	ed := a.ed
	l := a.rowStart(sel, sel)
	label := partition.Key(r.key)
	var dr *devRow
	if r.dev >= 0 && a.d != nil && r.dev < len(a.d.devs) {
		dr = &a.d.devs[r.dev]
		label = dr.label + " " + dr.abbrev
		if dr.child {
			label = st.G.Branch + dr.label
		}
	}
	l.cell(st.Text, label, cols.label, false, st.G.Ellipsis)
	for i := range ed.plan.Next.Agents {
		now := ed.plan.Next.Agents[i].OwnsDevice(r.key)
		was := false
		if ca := ed.plan.Current.Agent(ed.plan.Next.Agents[i].ID); ca != nil {
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
			ag := a.d.kernels[ki].agent
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
		foreign := !stranded && a.foreignHolders(r.key, dr)
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
func (a *App) foreignHolders(k model.DeviceKey, dr *devRow) bool {
	next := a.ed.plan.Next
	if next == nil || !next.Exclusive {
		return false
	}
	for _, ki := range dr.kernels {
		ap := next.Agent(a.d.kernels[ki].k.Agent)
		if ap != nil && !ap.OwnsDevice(k) {
			return true
		}
	}
	return false
}

// gridAgentRow draws an agent's cpu or mem, or the field being typed.
func (a *App) gridAgentRow(i int, r edRow, shorts []string, cols edCols, w int, sel bool) string {
	st := a.st
	ed := a.ed
	l := a.rowStart(sel, sel)
	what := "cpu"
	if r.kind == rowMem {
		what = "mem"
	}
	l.cell(st.Dim, what, 5, false, "")
	l.cell(st.Text, strconv.Itoa(r.agent+1)+" "+shorts[r.agent], max(cols.label-5, 4), false, st.G.Ellipsis)
	room := w - l.w - 1
	if ed.input != nil && ed.inputRow == i {
		// As wide as the text (plus the cursor), so what it means shows
		// right after it.
		ed.input.SetWidth(max(min(room-2, 40, width(ed.input.Value())+1), 8))
		v := ed.input.View()
		l.putW(paint{}, v, width(v))
		if sp := ed.inputCheck.spans(); len(sp) > 0 {
			l.gap(2)
			putSpans(l, st, sp, w-l.w)
		}
		return clampLine(l.finish(w), w)
	}
	next := &ed.plan.Next.Agents[r.agent]
	cur := ed.plan.Current.Agent(next.ID)
	var val, was string
	if r.kind == rowMem {
		val = memOrNone(next.Mem)
		if cur != nil && !cur.Mem.Equal(next.Mem) {
			was = memOrNone(cur.Mem)
		}
	} else {
		val, was = cpuText(ed.plan, next), ""
		if cur != nil {
			if c := cpuText(ed.plan, cur); c != val {
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
func (a *App) editorStatus(w int) []string {
	ed := a.ed
	p := ed.plan
	g := a.st.G
	var first []span
	switch {
	case ed.lost != "":
		first = []span{{lvlCrit, "You no longer hold the draft: " + ed.lost + ". esc leaves."}}
	case ed.stale != "":
		first = []span{{lvlCrit, "STALE: " + ed.stale}, {lvlPlain, " · p reviews the recomputed plan; apply is refused until then"}}
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
	if ed.lost == "" && (ed.dirty() || len(ed.undo) > 0) {
		second = []span{{lvlPlain, "draft: " + ed.changeSummary()}}
		keys := " · u undoes"
		if ed.dirty() {
			keys += ", r resets, p plan"
		}
		if ed.stale == "" && p.Valid() && p.Changed() {
			keys += ", A applies"
		}
		second = append(second, span{lvlDim, keys})
	}
	legend := []span{{lvlDim, g.Owned + " owner  " + g.Gained + g.Owned + " gains  " + g.Lost + " loses  " + g.Dot + " not its device  ! another agent's kernels on it · 1-9 or ←/→ move the selected device · m mode · enter edits cpu/mem"}}
	lines := [][]span{first, second, legend}
	if ed.result != nil {
		// The result (with the backup's path) may take the legend's row too
		// rather than be cut.
		rows := wrapWords(ed.result, w-1)
		lines[1] = rows[0]
		if len(rows) > 1 {
			lines[2] = rows[1]
		}
	}
	out := make([]string, len(lines))
	for i, sp := range lines {
		out[i] = spansRow(a.st, append([]span{{lvlPlain, " "}}, sp...), w)
	}
	return out
}

// planLines is the plan as the CLI prints it, coloured: errors first and
// in red, so an invalid draft cannot be missed.
func (a *App) planLines() [][]span {
	ed := a.ed
	p := ed.plan
	var out [][]span
	if ed.stale != "" {
		out = append(out, []span{{lvlCrit, "STALE: " + ed.stale + ": p reviews and recomputes this plan on the file as it is now"}}, nil)
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
func (a *App) viewPlan(w, h int) []string {
	ed := a.ed
	var body []string
	for _, sp := range a.planLines() {
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
			body = append(body, spansRow(a.st, append([]span{{lvlPlain, " "}}, row...), w))
		}
	}
	visible := max(h-1, 0)
	ed.planOff = min(ed.planOff, max(len(body)-visible, 0))
	title := []span{{lvlFocus, " Plan "}}
	if ed.stale != "" {
		title = append(title, span{lvlDim, " "}, span{lvlBadge, " STALE "})
	}
	out := []string{a.titleRow(w, title, []span{{lvlDim, "A apply · esc back"}}, len(body), visible, ed.planOff)}
	for i := ed.planOff; i < len(body) && len(out) < h; i++ {
		out = append(out, body[i])
	}
	return out
}

// viewJournal draws the last journal records, newest first.
func (a *App) viewJournal(w, h int) []string {
	ed := a.ed
	st := a.st
	var body []string
	row := func(sp ...span) { body = append(body, spansRow(st, append([]span{{lvlPlain, " "}}, sp...), w)) }
	switch {
	case ed.journalErr != "":
		row(span{lvlCrit, ed.journalErr})
	case len(ed.journal) == 0:
		row(span{lvlDim, "nothing applied yet: the journal " + a.opts.Desk.JournalPath() + " is empty"})
	default:
		row(span{lvlDim, padRight("TIME", 20) + padRight("ACTION", 9) + padRight("RESULT", 9) + padRight("ACTOR", 14) + padRight("ORIGIN", 22) + "OLD → NEW"})
	}
	for _, r := range ed.journal {
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
	if ed.journalBad > 0 {
		row(span{lvlWarn, plural(ed.journalBad, "journal line") + " could not be read (torn writes)"})
	}
	if _, ok := a.opts.Desk.LastWrite(); ok || len(ed.journal) > 0 {
		body = append(body, "")
		row(span{lvlWarn, "The agents read agent.toml only at start-up: a change takes effect when they restart."})
	}
	visible := max(h-1, 0)
	ed.jourOff = min(ed.jourOff, max(len(body)-visible, 0))
	out := []string{a.titleRow(w, []span{{lvlFocus, " Journal "}, {lvlDim, " " + a.opts.Desk.JournalPath() + " "}},
		[]span{{lvlDim, "newest first · esc back"}}, len(body), visible, ed.jourOff)}
	for i := ed.jourOff; i < len(body) && len(out) < h; i++ {
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

// shortHelpFor is shortHelpLine for any list of bindings.
func (a *App) shortHelpFor(bs []key.Binding, w int) string { return shortHelpOf(a.st, bs, w) }

// shortHelpOf is a footer of key help in w cells: as many bindings as
// fit, then an ellipsis. The node console and the fleet console share it.
func shortHelpOf(st *Styles, bs []key.Binding, w int) string {
	l := newLine(paint{})
	sepG := " • "
	if st.ASCII {
		sepG = " | "
	}
	for i, b := range bs {
		h := b.Help()
		n := width(h.Key) + 1 + width(h.Desc)
		if i > 0 {
			n += 3
		}
		if l.w+n > w {
			if l.w+2 <= w {
				l.gap(1)
				l.put(st.Border, st.G.Ellipsis)
			}
			break
		}
		if i > 0 {
			l.putW(st.Border, sepG, 3)
		}
		l.put(st.HelpKey, h.Key)
		l.gap(1)
		l.put(st.HelpDesc, h.Desc)
	}
	return l.finish(w)
}
