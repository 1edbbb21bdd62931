package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// fleetCol is one column of the fleet table.
type fleetCol struct {
	id    string
	title string
	w     int
	right bool
	// drop orders what goes when the screen is narrow: the highest first;
	// 0 never goes.
	drop int
}

// fleetCols are the table's columns at width w: the node name takes what
// the others leave, at least nameMin cells.
func (m *Fleet) fleetCols(w int) ([]fleetCol, int) {
	const nameMin, nameMax = 12, 28
	cols := []fleetCol{
		{"state", "STATE", 11, false, 0},
		{"gpus", "GPUS", 4, true, 5},
		{"held", "HELD/CAP", 13, true, 0},
		{"free", "FREE", 7, true, 0},
		{"largest", "FITS≤", 7, true, 0},
		{"pieces", "PIECES", 6, true, 3},
		{"kernels", "KERN", 5, true, 6},
		{"issues", "ISSUES", 6, true, 4},
		{"seen", "SEEN", 7, true, 2},
		{"address", "ADDRESS", 21, false, 7},
	}
	if m.st.ASCII {
		cols[4].title = "FITS<="
	}
	if m.fitReq != nil {
		cols = append(cols, fleetCol{"fit", "FIT " + m.fitText, 16, false, 0})
	}
	used := func() int {
		n := 2 + nameMin // cursor and gap, the name
		for _, c := range cols {
			n += c.w + 1
		}
		return n
	}
	for used() > w {
		worst := -1
		for i, c := range cols {
			if c.drop > 0 && (worst < 0 || c.drop > cols[worst].drop) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		cols = slices.Delete(cols, worst, worst+1)
	}
	name := min(nameMin+max(w-used(), 0), nameMax)
	// Room left after the name reaches its widest goes to the fit column.
	if rest := w - (used() - nameMin + name); rest > 0 {
		for i := range cols {
			if cols[i].id == "fit" {
				cols[i].w += rest
			}
		}
	}
	return cols, name
}

// detailLines is the height of the selected node's pane under the table.
const detailLines = 4

func (m *Fleet) visibleRows() int {
	_, h := m.size()
	return max(h-3-detailLines-1, 1) // header, title, column heads; detail; footer
}

// View draws the fleet console, or the opened node's console.
func (m *Fleet) View() tea.View {
	if m.drill != nil {
		v := m.drill.View()
		v.WindowTitle = untrusted.Text("fgtop fleet: " + m.drill.nodeName() + " (read-only)")
		return v
	}
	w, h := m.size()
	var rows []string
	if m.showHelp {
		rows = m.viewFleetHelp(w, h)
	} else {
		rows = m.viewTable(w, h)
	}
	for len(rows) < h {
		rows = append(rows, "")
	}
	rows = rows[:h]
	for i, r := range rows {
		rows[i] = clampLine(r, w)
	}
	content := strings.Join(rows, "\n")
	if m.st.ASCII {
		content = asciiOnly(content)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	v.WindowTitle = "fgtop fleet"
	return v
}

func (m *Fleet) counts() (live, stale, unreachable, connecting int, held, capacity model.Dec, gpus, unknown int) {
	held, capacity = model.Zero, model.Zero
	if m.fl == nil {
		return
	}
	for _, n := range m.fl.Nodes {
		switch n.State {
		case fleet.Live:
			live++
		case fleet.Stale:
			stale++
		case fleet.Unreachable:
			unreachable++
		default:
			connecting++
		}
		// The header's figures are the live nodes': a stale or unreachable
		// node's are not its figures now.
		if n.State == fleet.Live && n.Snap != nil && n.Sum.Slot != "" {
			held, capacity = held.Add(n.Sum.Held), capacity.Add(n.Sum.Capacity)
			gpus += n.Sum.GPUs
			unknown += n.Sum.Unknown
		}
	}
	return
}

func (m *Fleet) viewHeader(w int) string {
	st := m.st
	live, stale, unr, conn, held, capacity, gpus, unknown := m.counts()
	capText := capacity.String()
	if unknown > 0 {
		capText = "?"
	}
	sp := []span{{lvlTitle, " fgtop fleet"}}
	if m.opts.Source != "" {
		sp = append(sp, span{lvlDim, " │ " + m.opts.Source})
	}
	sp = append(sp, span{lvlDim, " │ "}, span{lvlOK, fmt.Sprintf("%d live", live)})
	if stale > 0 {
		sp = append(sp, span{lvlDim, " · "}, span{lvlWarn, fmt.Sprintf("%d stale", stale)})
	}
	if unr > 0 {
		sp = append(sp, span{lvlDim, " · "}, span{lvlCrit, fmt.Sprintf("%d unreachable", unr)})
	}
	if conn > 0 {
		sp = append(sp, span{lvlDim, " · "}, span{lvlInfo, fmt.Sprintf("%d connecting", conn)})
	}
	sp = append(sp, span{lvlDim, fmt.Sprintf(" │ live: %d GPUs, held %s/%s", gpus, held, capText)})
	if st.ASCII {
		for i := range sp {
			sp[i].text = strings.ReplaceAll(strings.ReplaceAll(sp[i].text, "│", "|"), "·", ",")
		}
	}
	return spansRow(st, sp, w)
}

func (m *Fleet) viewTable(w, h int) []string {
	st := m.st
	rows := []string{m.viewHeader(w)}
	cols, nameW := m.fleetCols(w)
	arrow := st.G.Down
	if m.sortDesc {
		arrow = st.G.Up
	}
	title := []span{{lvlFocus, " Nodes "}, {lvlDim, "by " + m.sortCol + " " + arrow + " "}}
	if m.filter != "" {
		title = append(title, span{lvlAccent, "/" + m.filter + " "})
	}
	var info []span
	if m.fitReq != nil {
		// Only a live node fits: a stale or unreachable one is unknown.
		ok, unknown, over := 0, 0, 0
		for _, r := range m.rows {
			n := &m.fl.Nodes[r]
			if n.State != fleet.Live {
				unknown++
			} else if f, done := m.fits[n.Addr]; done && f.OK {
				ok++
				if f.Overcommit {
					over++
				}
			}
		}
		if m.fits == nil {
			info = append(info, span{lvlDim, "fit " + m.fitText + ": computing"})
		} else {
			info = append(info, span{lvlAccent, fmt.Sprintf("%s fits on %d/%d", m.fitText, ok, len(m.rows))})
			if over > 0 {
				info = append(info, span{lvlCrit, fmt.Sprintf(" (%d only by overcommitting)", over)})
			}
			if unknown > 0 {
				sep := " · "
				if st.ASCII {
					sep = ", "
				}
				info = append(info, span{lvlWarn, fmt.Sprintf("%s%d unknown", sep, unknown)})
			}
		}
	}
	vis := m.visibleRows()
	rows = append(rows, titleRowOf(st, w, title, info, len(m.rows), vis, m.offset))
	head := newLine(paint{})
	head.gap(2)
	head.cell(st.Dim, "NODE", nameW, false, st.G.Ellipsis)
	for _, c := range cols {
		head.gap(1)
		head.cell(st.Dim, c.title, c.w, c.right, st.G.Ellipsis)
	}
	rows = append(rows, head.finish(w))
	if m.fl == nil || len(m.rows) == 0 {
		msg := "  waiting for the nodes…"
		if m.fl != nil {
			msg = "  no node matches the filter"
		}
		rows = append(rows, spansRow(st, []span{{lvlDim, msg}}, w))
	}
	now := m.now()
	for i := m.offset; i < len(m.rows) && i < m.offset+vis; i++ {
		rows = append(rows, m.viewRow(&m.fl.Nodes[m.rows[i]], i == m.cursor, cols, nameW, w, now))
	}
	for len(rows) < 3+vis {
		rows = append(rows, "")
	}
	rows = append(rows, m.viewDetail(w, now)...)
	for len(rows) < h-1 {
		rows = append(rows, "")
	}
	return append(rows[:h-1], m.viewFooter(w))
}

// stateCell is a node's state as shown, with its colour.
func stateCell(n *fleet.Node) (level, string) {
	switch n.State {
	case fleet.Live:
		return lvlOK, "live"
	case fleet.Stale:
		return lvlWarn, "STALE"
	case fleet.Unreachable:
		return lvlCrit, "UNREACHABLE"
	}
	return lvlInfo, "connecting"
}

func (m *Fleet) viewRow(n *fleet.Node, sel bool, cols []fleetCol, nameW, w int, now time.Time) string {
	st := m.st
	base := paint{}
	if sel {
		base = st.Selected
	}
	l := newLine(base)
	if sel {
		l.putW(st.Accent, st.G.Cursor, width(st.G.Cursor))
		l.gap(2 - width(st.G.Cursor))
	} else {
		l.gap(2)
	}
	dimmed := n.State != fleet.Live
	text := st.Text
	if dimmed {
		text = st.Dim
	}
	l.cell(text, n.Name, nameW, false, st.G.Ellipsis)
	s := n.Sum
	has := n.Snap != nil && s.Slot != ""
	for _, c := range cols {
		l.gap(1)
		p, v := text, ""
		switch c.id {
		case "state":
			lv, t := stateCell(n)
			p, v = st.level(lv), t
		case "gpus":
			if n.Snap != nil {
				v = strconv.Itoa(s.GPUs)
			}
		case "held":
			if has {
				v = s.Held.String() + "/" + s.CapacityText()
			}
		case "free":
			if has {
				v = s.Free.String()
			}
		case "largest":
			if has {
				v = s.Largest.String()
				if s.Largest.IsZero() && !dimmed {
					p = st.Warn
				}
			}
		case "pieces":
			if has {
				v = strconv.Itoa(s.Pieces)
			}
		case "kernels":
			if n.Snap != nil {
				v = strconv.Itoa(s.Kernels)
			}
		case "issues":
			if n.Snap != nil {
				v = strconv.Itoa(s.Issues)
				if s.Issues > 0 && !dimmed {
					p = st.Warn
				}
			}
		case "seen":
			if !n.LastSeen.IsZero() {
				v = fmtAge(now.Sub(n.LastSeen))
			}
		case "address":
			v = n.Addr
		case "fit":
			lv, t := m.fitCell(n)
			p, v = st.level(lv), t
		}
		if v == "" {
			p, v = st.NA, "-"
		}
		l.cell(p, v, c.w, c.right, st.G.Ellipsis)
	}
	return l.finish(w)
}

// fitCell is the FIT column of a node: where the request lands, or the
// short reason.
func (m *Fleet) fitCell(n *fleet.Node) (level, string) {
	if n.State != fleet.Live {
		return lvlWarn, "unknown" // its STATE says why; the detail pane, more
	}
	if n.Snap == nil {
		return lvlNA, "-"
	}
	f, ok := m.fits[n.Addr]
	if !ok {
		return lvlDim, "…"
	}
	if f.OK {
		g := f
		g.Agent = "" // the detail pane names it; the cell has no room
		if f.Overcommit {
			// Backend.AI would place it, over a device other agents fill.
			return lvlCrit, "OVERCOMMIT " + placementText(g, deviceLabels(n.Snap))
		}
		return lvlOK, "fits " + placementText(g, deviceLabels(n.Snap))
	}
	if len(f.Short) > 0 {
		var parts []string
		for _, s := range f.Short {
			parts = append(parts, fmt.Sprintf("%s short %s", s.Slot, fmtSlot(s.Slot, s.Amount)))
		}
		return lvlCrit, "no: " + strings.Join(parts, ", ")
	}
	return lvlCrit, "no: " + f.ErrKind
}

// overcommitSpans says which devices a fit would put over capacity
// across every agent: " GPU0 would hold 1.70/1.00 across all agents".
func overcommitSpans(f fleet.Fit, labels map[model.DeviceID]string) []span {
	var out []span
	for _, d := range f.Devices {
		if !d.Overcommit {
			continue
		}
		name := labels[d.Device]
		if name == "" {
			name = string(d.Device)
		}
		out = append(out, span{lvlCrit, fmt.Sprintf(" · %s would hold %s/%s across all agents", name, d.TotalAfter, d.Capacity)})
	}
	return out
}

// placementText is "agent: GPU0=1.5 GPU1=1.0": the accelerator slots,
// devices named as the node's console names them.
func placementText(f fleet.Fit, labels map[model.DeviceID]string) string {
	var parts []string
	for _, s := range f.Placement {
		if !s.Slot.IsAccelerator() {
			continue
		}
		for _, sh := range s.Shares {
			name := labels[sh.Device]
			if name == "" {
				name = string(sh.Device)
			}
			parts = append(parts, fmt.Sprintf("%s=%s", name, sh.Amount))
		}
	}
	out := strings.Join(parts, " ")
	if f.Agent != "" {
		out = string(f.Agent) + ": " + out
	}
	return out
}

// viewDetail is the selected node's pane: where it is, why it is stale or
// unreachable, its devices, and the :fit outcome in full.
func (m *Fleet) viewDetail(w int, now time.Time) []string {
	st := m.st
	if m.fl == nil || m.cursor >= len(m.rows) {
		return []string{titleRowOf(st, w, nil, nil, 0, 0, 0)}
	}
	n := &m.fl.Nodes[m.rows[m.cursor]]
	lv, state := stateCell(n)
	title := []span{{lvlTitle, " " + n.Name + " "}, {lvlDim, n.Addr + " "}, {lv, state + " "}}
	var info []span
	if !n.LastSeen.IsZero() {
		info = append(info, span{lvlDim, "seen " + fmtAge(now.Sub(n.LastSeen)) + " ago"})
	}
	out := []string{titleRowOf(st, w, title, info, 0, 0, 0)}
	if n.Reason != "" {
		out = append(out, spansRow(st, []span{{lv, "  " + n.Reason}}, w))
	}
	var labels map[model.DeviceID]string
	freeLine := -1
	if n.Snap != nil {
		labels = deviceLabels(n.Snap)
		var sp []span
		sp = append(sp, span{lvlDim, "  "})
		for i, d := range n.Sum.Devices {
			if i > 0 {
				sp = append(sp, span{lvlDim, "  "})
			}
			l := lvlPlain
			switch {
			case d.Free.Sign() < 0:
				l = lvlCrit
			case d.Free.IsZero():
				l = lvlDim
			}
			if d.CapacityUnknown {
				l = lvlPlain
			}
			sp = append(sp, span{lvlAccent, labels[d.Device] + " "}, span{l, d.Held.String() + "/" + d.CapacityText()})
		}
		if len(n.Sum.Devices) == 0 {
			sp = append(sp, span{lvlDim, "no accelerators"})
		}
		out = append(out, spansRow(st, sp, w))
		if n.Sum.Slot != "" {
			freeLine = len(out)
			out = append(out, spansRow(st, []span{{lvlDim, fmt.Sprintf("  %s free %s in %s; the largest %s request that fits: %s",
				n.Sum.Slot, n.Sum.Free, fleet.Pieces(n.Sum.Pieces), n.Sum.Slot, n.Sum.Largest)}}, w))
		}
	}
	if m.fitReq != nil {
		f, ok := m.fits[n.Addr]
		switch {
		case n.State != fleet.Live:
			why := "  " + m.fitText + ": unknown, the node is " + string(n.State)
			switch {
			case !ok:
			case f.OK:
				why += "; its last figures would take it: " + placementText(f, labels)
			default:
				why += "; on its last figures: " + f.Reason
			}
			out = append(out, spansRow(st, []span{{lvlWarn, why}}, w))
		case ok:
			switch {
			case f.OK && f.Overcommit:
				out = append(out, spansRow(st, append([]span{{lvlCrit, "  " + m.fitText + " OVERCOMMITS: " + placementText(f, labels)}}, overcommitSpans(f, labels)...), w))
			case f.OK:
				out = append(out, spansRow(st, []span{{lvlOK, "  " + m.fitText + " fits: " + placementText(f, labels)}}, w))
			default:
				out = append(out, spansRow(st, []span{{lvlCrit, "  " + m.fitText + ": " + f.Reason}}, w))
			}
		}
		// A stale or unreachable node's reason takes a line: the :fit
		// answer keeps its own, the free-shares line gives way.
		if len(out) > detailLines && freeLine >= 0 {
			out = slices.Delete(out, freeLine, freeLine+1)
		}
	}
	for len(out) < detailLines {
		out = append(out, "")
	}
	return out[:detailLines]
}

// deviceLabels names a node's accelerators as its own console does
// (GPU0, MIG 4/0).
func deviceLabels(s *model.Snapshot) map[model.DeviceID]string {
	var idx []int
	out := map[model.DeviceID]string{}
	for i := range s.Devices {
		d := &s.Devices[i]
		switch {
		case !d.IsAccelerator():
		case d.IsMIG():
			out[d.ID] = "MIG " + migSuffix(d.ID)
		default:
			idx = append(idx, i)
		}
	}
	for i, l := range gpuLabels(s.Devices, idx) {
		out[s.Devices[i].ID] = l
	}
	return out
}

func (m *Fleet) viewFooter(w int) string {
	st := m.st
	l := newLine(paint{})
	switch {
	case m.prompt != promptNone:
		return promptLine(st, m.prompt, m.input, w)
	case m.flash.text != "":
		putSpans(l, st, []span{{m.flash.lvl, m.flash.text}}, w)
	default:
		return shortHelpOf(st, m.keys.shortHelpIn(scFleet), w)
	}
	return l.finish(w)
}

func (m *Fleet) viewFleetHelp(w, h int) []string {
	st := m.st
	rows := []string{m.viewHeader(w), titleRowOf(st, w, []span{{lvlFocus, " Help "}}, []span{{lvlDim, "esc/? back"}}, 0, 0, 0)}
	for i, row := range helpRowsOf(&m.help, m.keys.fullHelpIn(scFleet), w-2) {
		if i > 0 {
			rows = append(rows, "")
		}
		for _, ln := range strings.Split(m.help.FullHelpView(row), "\n") {
			rows = append(rows, " "+ln)
		}
	}
	rows = append(rows, "", spansRow(st, []span{{lvlTitle, " Columns"}}, w))
	for _, c := range [][2]string{
		{"HELD/CAP", "shares held / capacity over the node's GPUs (exact decimals, the GPUs' slot)"},
		{"FREE", "capacity not held; PIECES: on how many GPUs it lies (fragmentation)"},
		{"FITS<=", "the largest request of that slot alone Backend.AI's allocator would place now"},
		{"STATE", "live; STALE: no line for a while (last figures shown); UNREACHABLE: why, below"},
	} {
		rows = append(rows, spansRow(st, []span{{lvlAccent, "   " + padRight(c[0], 10)}, {lvlPlain, c[1]}}, w))
	}
	rows = append(rows, "", spansRow(st, []span{{lvlTitle, " Commands"}}, w))
	for _, c := range [][2]string{
		{":fit SLOTS", "where would cuda.shares=2.5,cpu=8,mem=64g fit? (esc or :fit clears)"},
		{":sort COL [desc]", strings.Join(fleetSortCols, " ")},
		{":filter TEXT", "like /TEXT; !TEXT keeps what does not match"},
		{":q", "quit"},
	} {
		rows = append(rows, spansRow(st, []span{{lvlAccent, "   " + padRight(c[0], 18)}, {lvlPlain, c[1]}}, w))
	}
	for len(rows) < h-1 {
		rows = append(rows, "")
	}
	return append(rows[:h-1], m.viewFooter(w))
}
