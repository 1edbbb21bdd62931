package fleet

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"

	"github.com/fgtop/fgtop/ui/console"
	"github.com/fgtop/fgtop/ui/kit"
)

// fleetCol is one column of the fleet table.
type fleetCol struct {
	ID    string
	Title string
	W     int
	right bool
	// drop orders what goes when the screen is narrow: the highest first;
	// 0 never goes.
	drop int
}

// fleetCols are the table's columns at width w: the node name takes what
// the others leave, at least nameMin cells.
func (m *Model) fleetCols(w int) ([]fleetCol, int) {
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
	if m.St.ASCII {
		cols[4].Title = "FITS<="
	}
	// A marked node's mark shares its state's column: widened to the
	// widest, within reason, so that "live, floods lines" is read whole.
	if m.fl != nil {
		for i := range m.fl.Nodes {
			_, t := m.stateText(&m.fl.Nodes[i])
			cols[0].W = min(max(cols[0].W, kit.Width(t)), stateMax)
		}
	}
	if m.fitReq != nil {
		cols = append(cols, fleetCol{"fit", "FIT " + m.fitText, 16, false, 0})
	}
	usedBy := func(cols []fleetCol) int {
		n := 2 + nameMin // cursor and gap, the name
		for _, c := range cols {
			n += c.W + 1
		}
		return n
	}
	cols = dropUntil(cols, func(c fleetCol) int { return c.drop }, func(cols []fleetCol) bool { return usedBy(cols) <= w })
	used := usedBy(cols)
	name := min(nameMin+max(w-used, 0), nameMax)
	// Room left after the name reaches its widest goes to the fit column.
	if rest := w - (used - nameMin + name); rest > 0 {
		for i := range cols {
			if cols[i].ID == "fit" {
				cols[i].W += rest
			}
		}
	}
	return cols, name
}

// detailLines is the height of the selected node's pane under the table.
const detailLines = 4

func (m *Model) visibleRows() int {
	_, h := m.size()
	return max(h-3-detailLines-1, 1) // header, title, column heads; detail; footer
}

// View draws the fleet console, or the opened node's console.
func (m *Model) View() tea.View {
	if m.drill != nil {
		v := m.drill.View()
		v.WindowTitle = untrusted.Text("fgtop fleet: " + m.drill.NodeName() + " (read-only)")
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
		rows[i] = kit.ClampLine(r, w)
	}
	content := strings.Join(rows, "\n")
	if m.St.ASCII {
		content = kit.ASCIIOnly(content)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	v.WindowTitle = "fgtop fleet"
	return v
}

// slotTotal is what the live nodes hold and offer of one slot.
type slotTotal struct {
	slot           model.SlotName
	held, capacity model.Dec
	unknown        int
}

// text is held/capacity, "?" for a capacity some device leaves unknown.
func (t slotTotal) text() string {
	c := t.capacity.String()
	if t.unknown > 0 {
		c = "?"
	}
	return t.held.String() + "/" + c
}

// counts are the nodes by state and, per slot in the order met, what the
// live nodes hold of their GPUs: shares and whole devices are never added
// together.
func (m *Model) counts() (live, stale, unreachable, connecting int, totals []slotTotal, gpus int) {
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
			i := slices.IndexFunc(totals, func(t slotTotal) bool { return t.slot == n.Sum.Slot })
			if i < 0 {
				totals = append(totals, slotTotal{slot: n.Sum.Slot, held: model.Zero, capacity: model.Zero})
				i = len(totals) - 1
			}
			t := &totals[i]
			t.held, t.capacity = t.held.Add(n.Sum.Held), t.capacity.Add(n.Sum.Capacity)
			t.unknown += n.Sum.Unknown
			gpus += n.Sum.GPUs
		}
	}
	return
}

// headerPiece is a part of the fleet header, its separator included;
// when the line is too narrow the piece with the highest drop goes first
// (0 never goes), then the pieces that stay take their short form.
type headerPiece struct {
	spans, short []kit.Span
	drop         int
}

func (m *Model) viewHeader(w int) string {
	st := m.St
	live, stale, unr, conn, totals, gpus := m.counts()
	heldText := "0/0"
	switch len(totals) {
	case 0:
	case 1:
		heldText = totals[0].text()
	default:
		parts := make([]string, len(totals))
		for i, t := range totals {
			parts[i] = t.text() + " " + string(t.slot)
		}
		heldText = strings.Join(parts, ", ")
	}
	ps := []headerPiece{{spans: []kit.Span{{Lvl: kit.LvlTitle, Text: " fgtop fleet"}}}}
	ps = append(ps, m.pastPieces()...)
	if m.opts.Source != "" {
		ps = append(ps, headerPiece{spans: []kit.Span{{Lvl: kit.LvlDim, Text: " │ " + m.opts.Source}}, drop: 3})
	}
	// The counts never go: in the past above all, they are what the
	// moment was (at 80 columns the PAST marker used to push them off).
	counts := []kit.Span{{Lvl: kit.LvlDim, Text: " │ "}, {Lvl: kit.LvlOK, Text: fmt.Sprintf("%d live", live)}}
	if stale > 0 {
		counts = append(counts, kit.Span{Lvl: kit.LvlDim, Text: " · "}, kit.Span{Lvl: kit.LvlWarn, Text: fmt.Sprintf("%d stale", stale)})
	}
	if unr > 0 {
		counts = append(counts, kit.Span{Lvl: kit.LvlDim, Text: " · "}, kit.Span{Lvl: kit.LvlCrit, Text: fmt.Sprintf("%d unreachable", unr)})
	}
	if conn > 0 {
		counts = append(counts, kit.Span{Lvl: kit.LvlDim, Text: " · "}, kit.Span{Lvl: kit.LvlInfo, Text: fmt.Sprintf("%d connecting", conn)})
	}
	if m.fl != nil && m.fl.Err != "" {
		// Before the counts: "0 live" alone reads as a fleet at rest.
		counts = append([]kit.Span{{Lvl: kit.LvlDim, Text: " │ "}, {Lvl: kit.LvlCrit, Text: "SOURCE FAILING"}}, counts...)
	}
	// In the past the totals are the moment's, not what is live: "then",
	// the PAST marker beside it naming the moment (its clock again would
	// push the totals off at 110 columns).
	label := "live"
	if !m.pastShown().IsZero() {
		label = "then"
	}
	ps = append(ps, headerPiece{spans: counts},
		headerPiece{spans: []kit.Span{{Lvl: kit.LvlDim, Text: fmt.Sprintf(" │ %s: %d GPUs, held %s", label, gpus, heldText)}}, drop: 2})
	var sp []kit.Span
	for _, p := range fitPieces(ps, w) {
		sp = append(sp, p...)
	}
	if st.ASCII {
		for i := range sp {
			sp[i].Text = strings.NewReplacer("│", "|", " · ", ", ", "·", ",").Replace(sp[i].Text)
		}
	}
	return kit.SpansRow(st, sp, w)
}

// dropUntil deletes from xs, in place, the element of the highest drop
// (0 never goes) until fits says the rest fits or nothing droppable is
// left; the table's columns and the header's pieces give way alike.
func dropUntil[T any](xs []T, drop func(T) int, fits func([]T) bool) []T {
	for !fits(xs) {
		worst := -1
		for i, x := range xs {
			if d := drop(x); d > 0 && (worst < 0 || d > drop(xs[worst])) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		xs = slices.Delete(xs, worst, worst+1)
	}
	return xs
}

// fitPieces is what of the header's pieces fits in w cells: the droppable
// ones go, the highest drop first, then the others take their short
// forms, the last first; what still does not fit is cut at the end.
func fitPieces(ps []headerPiece, w int) [][]kit.Span {
	ps = slices.Clone(ps)
	width := func(ps []headerPiece) int {
		n := 0
		for _, p := range ps {
			n += kit.SpansWidth(p.spans)
		}
		return n
	}
	ps = dropUntil(ps, func(p headerPiece) int { return p.drop }, func(ps []headerPiece) bool { return width(ps) <= w })
	for i := len(ps) - 1; i >= 0 && width(ps) > w; i-- {
		if ps[i].short != nil {
			ps[i].spans = ps[i].short
		}
	}
	out := make([][]kit.Span, len(ps))
	for i, p := range ps {
		out[i] = p.spans
	}
	return out
}

func (m *Model) viewTable(w, h int) []string {
	st := m.St
	rows := []string{m.viewHeader(w)}
	cols, nameW := m.fleetCols(w)
	arrow := st.G.Down
	if m.sortDesc {
		arrow = st.G.Up
	}
	title := []kit.Span{{Lvl: kit.LvlFocus, Text: " Nodes "}, {Lvl: kit.LvlDim, Text: "by " + m.sortCol + " " + arrow + " "}}
	if m.Filter != "" && m.fl != nil {
		// As the kernels table says its filter: what it matches, and how
		// many (the scroll position shows only once they overflow).
		title = append(title, kit.Span{Lvl: kit.LvlDim, Text: "matching "}, kit.Span{Lvl: kit.LvlAccent, Text: "/" + strings.TrimSpace(m.Filter)},
			kit.Span{Lvl: kit.LvlDim, Text: fmt.Sprintf(" (%d) ", len(m.Rows))})
	}
	var info []kit.Span
	if m.fitReq != nil {
		// Only a live node fits: a stale or unreachable one is unknown.
		ok, unknown, over := 0, 0, 0
		for _, r := range m.Rows {
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
			info = append(info, kit.Span{Lvl: kit.LvlDim, Text: "fit " + m.fitText + ": computing"})
		} else {
			info = append(info, kit.Span{Lvl: kit.LvlAccent, Text: fmt.Sprintf("%s fits on %d/%d", m.fitText, ok, len(m.Rows))})
			if over > 0 {
				info = append(info, kit.Span{Lvl: kit.LvlCrit, Text: fmt.Sprintf(" (%d only by overcommitting)", over)})
			}
			if unknown > 0 {
				sep := " · "
				if st.ASCII {
					sep = ", "
				}
				info = append(info, kit.Span{Lvl: kit.LvlWarn, Text: fmt.Sprintf("%s%d unknown", sep, unknown)})
			}
		}
	}
	vis := m.visibleRows()
	rows = append(rows, kit.TitleRowOf(st, w, title, info, len(m.Rows), vis, m.offset))
	head := kit.NewLine(kit.Paint{})
	head.Gap(2)
	head.Cell(st.Dim, "NODE", nameW, false, st.G.Ellipsis)
	for _, c := range cols {
		head.Gap(1)
		head.Cell(st.Dim, c.Title, c.W, c.right, st.G.Ellipsis)
	}
	rows = append(rows, head.Finish(w))
	if m.fl == nil || len(m.Rows) == 0 {
		msg, lvl := "  waiting for the nodes…", kit.LvlDim
		switch {
		case m.fl == nil:
		case m.fl.Err != "":
			// The source fails: no node is not "none matches".
			msg, lvl = "  no nodes: "+m.fl.Err, kit.LvlCrit
		case len(m.fl.Nodes) == 0:
			msg = "  no nodes yet: the source has named none"
		case m.Filter != "":
			msg = "  " + m.noMatchText()
		}
		// The names wrap into the rows' room: one cut line lost them.
		for i, l := range kit.WrapWords([]kit.Span{{Lvl: lvl, Text: msg}}, w) {
			if i >= max(vis, 1) {
				break
			}
			rows = append(rows, kit.SpansRow(st, l, w))
		}
	}
	now := m.shownNow()
	for i := m.offset; i < len(m.Rows) && i < m.offset+vis; i++ {
		rows = append(rows, m.viewRow(&m.fl.Nodes[m.Rows[i]], i == m.Cursor, cols, nameW, w, now))
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

// stateMax is the widest the state column grows for a marked node.
const stateMax = 24

// markOf is the short form of a node's mark (Node.Note: "floods lines",
// "too large"), or "" for an unmarked node: the note up to its first
// colon or parenthesis, made safe by the untrusted-text rule.
func markOf(n *fleet.Node) string {
	note := n.Note
	if note == "" && n.Snap != nil && n.Sum.TooLarge {
		note = "too large"
	}
	if i := strings.IndexAny(note, ":("); i >= 0 {
		note = note[:i]
	}
	return untrusted.Text(strings.TrimSpace(note))
}

// stateText is the state column of a node: its state and, for a marked
// node, the mark, coloured as a warning at least.
func (m *Model) stateText(n *fleet.Node) (kit.Level, string) {
	lv, t := stateCell(n)
	mark := markOf(n)
	if mark == "" {
		return lv, t
	}
	if lv == kit.LvlOK || lv == kit.LvlInfo {
		lv = kit.LvlWarn
	}
	t += ", " + mark
	if m.St.ASCII {
		t = kit.ASCIIOnly(t)
	}
	return lv, t
}

// stateCell is a node's state as shown, with its colour.
func stateCell(n *fleet.Node) (kit.Level, string) {
	switch n.State {
	case fleet.Live:
		return kit.LvlOK, "live"
	case fleet.Stale:
		return kit.LvlWarn, "STALE"
	case fleet.Unreachable:
		return kit.LvlCrit, "UNREACHABLE"
	}
	return kit.LvlInfo, "connecting"
}

func (m *Model) viewRow(n *fleet.Node, sel bool, cols []fleetCol, nameW, w int, now time.Time) string {
	st := m.St
	base := kit.Paint{}
	if sel {
		base = st.Selected
	}
	l := kit.NewLine(base)
	if sel {
		l.PutW(st.Accent, st.G.Cursor, kit.Width(st.G.Cursor))
		l.Gap(2 - kit.Width(st.G.Cursor))
	} else {
		l.Gap(2)
	}
	dimmed := n.State != fleet.Live
	text := st.Text
	if dimmed {
		text = st.Dim
	}
	l.Cell(text, nameCell(n, nameW, st.G.Ellipsis), nameW, false, st.G.Ellipsis)
	s := n.Sum
	has := n.Snap != nil && s.Slot != ""
	for _, c := range cols {
		l.Gap(1)
		p, v := text, ""
		switch c.ID {
		case "state":
			lv, t := m.stateText(n)
			p, v = st.Level(lv), t
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
				v = s.FreeText()
			}
		case "largest":
			// What fits on a node that is not live is not known now
			// (as :fit says of it): its last figure is no answer.
			if has && dimmed {
				v = "-"
			} else if has {
				v = s.LargestText()
				if s.Unknown == 0 && !s.QuantumUnknown && s.Largest.IsZero() && !dimmed {
					p = st.Warn
				}
				// Placed, but only by overcommitting a device: marked as
				// --fit marks it (its detail gives the size that is not).
				if s.Unknown == 0 && !s.QuantumUnknown && s.LargestOvercommits {
					v += "!"
					if !dimmed {
						p = st.Crit
					}
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
				v = kit.FmtAge(now.Sub(n.LastSeen))
			}
		case "address":
			v = n.Address()
		case "fit":
			lv, t := m.fitCell(n)
			p, v = st.Level(lv), t
		}
		if v == "" {
			p, v = st.NA, "-"
		}
		l.Cell(p, v, c.W, c.right, st.G.Ellipsis)
	}
	return l.Finish(w)
}

// fitCell is the FIT column of a node: where the request lands, or the
// short reason.
func (m *Model) fitCell(n *fleet.Node) (kit.Level, string) {
	if n.State != fleet.Live {
		return kit.LvlWarn, "unknown" // its STATE says why; the detail pane, more
	}
	if n.Snap == nil {
		return kit.LvlNA, "-"
	}
	f, ok := m.fits[n.Addr]
	if !ok {
		return kit.LvlDim, "…"
	}
	if f.Unknown {
		return kit.LvlWarn, "unknown" // the detail pane says why
	}
	if f.OK {
		g := f
		g.Agent = "" // the detail pane names it; the cell has no room
		if f.Overcommit {
			// Backend.AI would place it, over a device other agents fill.
			return kit.LvlCrit, "OVERCOMMIT " + placementText(g, deviceLabels(n.Snap))
		}
		return kit.LvlOK, "fits " + placementText(g, deviceLabels(n.Snap))
	}
	if len(f.Short) > 0 {
		var parts []string
		for _, s := range f.Short {
			parts = append(parts, fmt.Sprintf("%s short %s", s.Slot, kit.FmtSlot(s.Slot, s.Amount)))
		}
		return kit.LvlCrit, "no: " + strings.Join(parts, ", ")
	}
	return kit.LvlCrit, "no: " + f.ErrKind
}

// overcommitSpans says which devices a fit would put over capacity
// across every agent: " GPU0 would hold 1.70/1.00 across all agents".
func overcommitSpans(f fleet.Fit, labels deviceNames) []kit.Span {
	var out []kit.Span
	for _, d := range f.Devices {
		if !d.Overcommit {
			continue
		}
		name := labels.of(d.Slot, d.Device)
		switch {
		case name != "":
		case d.Slot == model.SlotCPU:
			name = "cpu " + string(d.Device) // a core's id is a bare number
		case d.Slot == model.SlotMem:
			name = "mem"
		default:
			name = string(d.Device)
		}
		out = append(out, kit.Span{Lvl: kit.LvlCrit, Text: fmt.Sprintf(" · %s would hold %s/%s across all agents", name, kit.FmtSlot(d.Slot, d.TotalAfter), kit.FmtSlot(d.Slot, d.Capacity))})
	}
	return out
}

// placementText is "agent: GPU0=1.5 GPU1=1.0": the accelerator slots,
// devices named as the node's console names them.
func placementText(f fleet.Fit, labels deviceNames) string {
	var parts []string
	for _, s := range f.Placement {
		if !s.Slot.IsAccelerator() {
			continue
		}
		for _, sh := range s.Shares {
			name := cmp.Or(labels.of(s.Slot, sh.Device), string(sh.Device))
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
func (m *Model) viewDetail(w int, now time.Time) []string {
	st := m.St
	if m.fl == nil || m.Cursor >= len(m.Rows) {
		return []string{kit.TitleRowOf(st, w, nil, nil, 0, 0, 0)}
	}
	n := &m.fl.Nodes[m.Rows[m.Cursor]]
	lv, state := stateCell(n)
	title := []kit.Span{{Lvl: kit.LvlTitle, Text: " " + n.Name + " "}}
	if a := n.Address(); a != n.Name {
		// A node that has not said its name goes by its address: once.
		title = append(title, kit.Span{Lvl: kit.LvlDim, Text: a + " "})
	}
	title = append(title, kit.Span{Lvl: lv, Text: state + " "})
	var info []kit.Span
	if !n.LastSeen.IsZero() {
		info = append(info, kit.Span{Lvl: kit.LvlDim, Text: "seen " + kit.FmtAge(now.Sub(n.LastSeen)) + " ago"})
	}
	out := []string{kit.TitleRowOf(st, w, title, info, 0, 0, 0)}
	// The reason wraps: its end says what to do (add the key, start
	// fgtop serve), which one cut line at 80 columns lost.
	reasonFrom, reasonTo := len(out), len(out)
	var reason [][]kit.Span
	if n.Reason != "" {
		reason = kit.WrapWords([]kit.Span{{Lvl: lv, Text: "  " + n.Reason}}, w)
		for _, r := range reason {
			out = append(out, kit.SpansRow(st, r, w))
		}
		reasonTo = len(out)
	}
	if markOf(n) != "" {
		note := n.Note
		if note == "" {
			note = (&fleet.TooLargeError{Devices: len(n.Snap.Devices)}).Error() + ": largest fit not searched"
		}
		note = "  marked: " + untrusted.Text(note)
		if st.ASCII {
			note = kit.ASCIIOnly(note)
		}
		out = append(out, kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlWarn, Text: note}}, w))
	}
	var labels deviceNames
	freeLine, devLine := -1, -1
	if n.Snap != nil {
		labels = deviceLabels(n.Snap)
		var sp []kit.Span
		sp = append(sp, kit.Span{Lvl: kit.LvlDim, Text: "  "})
		for i, d := range n.Sum.Devices {
			if i > 0 {
				sp = append(sp, kit.Span{Lvl: kit.LvlDim, Text: "  "})
			}
			l := kit.LvlPlain
			switch {
			case d.Free.Sign() < 0:
				l = kit.LvlCrit
			case d.Free.IsZero():
				l = kit.LvlDim
			}
			if d.CapacityUnknown {
				l = kit.LvlPlain
			}
			sp = append(sp, kit.Span{Lvl: kit.LvlAccent, Text: cmp.Or(labels[model.DeviceKey{Name: d.Plugin, ID: d.Device}], string(d.Device)) + " "}, kit.Span{Lvl: l, Text: d.Held.String() + "/" + d.CapacityText()})
		}
		if len(n.Sum.Devices) == 0 {
			sp = append(sp, kit.Span{Lvl: kit.LvlDim, Text: "no accelerators"})
		}
		devLine = len(out)
		out = append(out, kit.SpansRow(st, sp, w))
		if n.Sum.Slot != "" {
			freeLine = len(out)
			// The answer first: at 80 columns the line's end is cut, and it
			// cut the figure itself ("request that fits:…").
			line := fmt.Sprintf("  the largest %s request that fits: %s", n.Sum.Slot, n.Sum.Largest)
			switch {
			case n.Sum.LargestOvercommits && n.Sum.LargestClear.IsZero():
				// "0 does not" read as a request of 0 that fits clear.
				line += " (overcommits, as any would)"
			case n.Sum.LargestOvercommits:
				line += fmt.Sprintf(" (overcommits; %s does not)", n.Sum.LargestClear)
			}
			line += fmt.Sprintf("; %s free %s in %s", n.Sum.Slot, n.Sum.Free, fleet.Pieces(n.Sum.Pieces))
			switch {
			case n.Sum.Unknown > 0:
				line = fmt.Sprintf("  %s free and the largest fit unknown: the capacity of %d device(s) is not known", n.Sum.Slot, n.Sum.Unknown)
			case n.Sum.QuantumUnknown:
				line = fmt.Sprintf("  %s free %s in %s; the largest fit unknown: the node's quantum_size is not known (give --quantum)", n.Sum.Slot, n.Sum.Free, fleet.Pieces(n.Sum.Pieces))
			case n.State != fleet.Live:
				// "Unknown" first: at 80 columns the end of the line is cut.
				line = fmt.Sprintf("  the largest %s request that fits: unknown, the node is %s (it was %s; %s free %s in %s)",
					n.Sum.Slot, n.State, n.Sum.Largest, n.Sum.Slot, n.Sum.Free, fleet.Pieces(n.Sum.Pieces))
			}
			out = append(out, kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlDim, Text: line}}, w))
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
			out = append(out, kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlWarn, Text: why}}, w))
		case ok:
			switch {
			case f.OK && f.Overcommit:
				out = append(out, kit.SpansRow(st, append([]kit.Span{{Lvl: kit.LvlCrit, Text: "  " + m.fitText + " OVERCOMMITS: " + placementText(f, labels)}}, overcommitSpans(f, labels)...), w))
			case f.OK:
				out = append(out, kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlOK, Text: "  " + m.fitText + " fits: " + placementText(f, labels)}}, w))
			case f.Unknown:
				out = append(out, kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlWarn, Text: "  " + m.fitText + ": unknown, " + f.Reason}}, w))
			default:
				out = append(out, kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlCrit, Text: "  " + m.fitText + ": " + f.Reason}}, w))
			}
		}
	}
	// A stale or unreachable node's reason takes a line: the :fit answer
	// keeps its own, the free-shares line gives way, then the last
	// figures of a node that is not live (the reason's end says what to
	// do), then the reason's later lines, its cut marked.
	if len(out) > detailLines && freeLine >= 0 {
		out = slices.Delete(out, freeLine, freeLine+1)
	}
	if len(out) > detailLines && devLine >= 0 && n.State != fleet.Live {
		out = slices.Delete(out, devLine, devLine+1)
	}
	for len(out) > detailLines && reasonTo-reasonFrom > 1 {
		out = slices.Delete(out, reasonTo-1, reasonTo)
		reasonTo--
		last := append(slices.Clone(reason[reasonTo-reasonFrom-1]), kit.Span{Lvl: lv, Text: st.G.Ellipsis})
		out[reasonTo-1] = kit.SpansRow(st, last, w)
	}
	for len(out) < detailLines {
		out = append(out, "")
	}
	return out[:detailLines]
}

// deviceNames are a node's accelerators named as its own console, simulate
// and fleet --fit name them (GPU0, MIG 4/0), by plugin and id: a CPU core
// and a GPU may share an id (cuda_open lists a GPU it cannot identify by
// its index), and by id alone the core was named as the GPU.
type deviceNames map[model.DeviceKey]string

// of is the name of the device id that slot is allocated on, "" where the
// console names it by its id.
func (l deviceNames) of(slot model.SlotName, id model.DeviceID) string {
	return l[model.DeviceKey{Name: slot.DeviceName(), ID: id}]
}

func deviceLabels(s *model.Snapshot) deviceNames { return names.Labels(s.Devices) }

func (m *Model) viewFooter(w int) string {
	st := m.St
	switch {
	case m.prompt != console.PromptNone:
		return console.PromptLine(st, m.prompt, m.Input, w)
	case m.Flash.Text != "":
		return kit.FlashFooter(st, m.Flash, m.Keys.EssentialIn(scFleet), w)
	}
	return kit.ShortHelpOf(st, m.Keys.ShortHelpIn(scFleet), w)
}

func (m *Model) viewFleetHelp(w, h int) []string {
	st := m.St
	var rows []string
	for i, row := range kit.HelpRowsOf(&m.Help, m.Keys.FullHelpIn(scFleet), w-2) {
		if i > 0 {
			rows = append(rows, "")
		}
		for _, ln := range strings.Split(m.Help.FullHelpView(row), "\n") {
			rows = append(rows, " "+ln)
		}
	}
	rows = append(rows, "", kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlTitle, Text: " Columns"}}, w))
	for _, c := range [][2]string{
		{"HELD/CAP", "shares held / capacity over the node's GPUs (exact decimals, the GPUs' slot)"},
		{"FREE", "capacity not held; PIECES: on how many GPUs it lies (fragmentation)"},
		{"FITS<=", "the largest request of that slot alone Backend.AI's allocator would place now"},
		{"STATE", "live; STALE: no line for a while (last figures shown); UNREACHABLE: why, below"},
	} {
		rows = append(rows, kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlAccent, Text: "   " + kit.PadRight(c[0], 10)}, {Lvl: kit.LvlPlain, Text: c[1]}}, w))
	}
	rows = append(rows, "", kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlTitle, Text: " Commands"}}, w))
	// From the table command dispatches by: every command it handles.
	for _, c := range fleetCommands() {
		rows = append(rows, kit.SpansRow(st, []kit.Span{{Lvl: kit.LvlAccent, Text: "   " + kit.PadRight(c.usage, 18)}, {Lvl: kit.LvlPlain, Text: c.desc}}, w))
	}
	// Below the header and the title, above the footer: what does not
	// fit scrolls (j/k, pgup/pgdn, g/G), as the console's help does.
	page := max(h-3, 1)
	m.helpPage = page
	top := min(m.helpTop, max(len(rows)-page, 0))
	m.helpTop = top
	where := "esc/? back"
	if len(rows) > page {
		where = fmt.Sprintf("j/k pgup/pgdn scroll  %d-%d/%d  esc/? back", top+1, min(top+page, len(rows)), len(rows))
		rows = rows[top:min(top+page, len(rows))]
	}
	out := []string{m.viewHeader(w), kit.TitleRowOf(st, w, []kit.Span{{Lvl: kit.LvlFocus, Text: " Help "}}, []kit.Span{{Lvl: kit.LvlDim, Text: where}}, 0, 0, 0)}
	out = append(out, rows...)
	for len(out) < h-1 {
		out = append(out, "")
	}
	return append(out[:h-1], m.viewFooter(w))
}

// nameCell is a node's NODE cell, w cells wide. A node that has not said its
// name is named by its address; cut at the end, every port of one host read
// alike ("gpu-node-0…" for gpu-node-01:2222 and :2223, the wrong port the
// one thing to tell apart), so such a name is cut before its port
// ("gpu-nod…:2223"), an IP address at its start ("…0.12.31:2222").
func nameCell(n *fleet.Node, w int, ell string) string {
	if n.Name != n.Addr || kit.Width(n.Name) <= w {
		return n.Name
	}
	i := strings.LastIndexByte(n.Name, ':')
	if i <= 0 || strings.Trim(n.Name[i+1:], "0123456789") != "" {
		return n.Name
	}
	if ip := net.ParseIP(strings.Trim(n.Name[:i], "[]")); ip != nil {
		// 10.0.12.31:2222 and 10.0.12.32:2222: the end tells them apart.
		return ell + kit.TruncateLeft(n.Name, w-kit.Width(ell))
	}
	port := n.Name[i:]
	hostW := w - kit.Width(port)
	if hostW < kit.Width(ell)+1 {
		return n.Name
	}
	return kit.Truncate(n.Name[:i], hostW, ell) + port
}
