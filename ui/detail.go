package ui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/model"
)

type detailKind uint8

const (
	detDevice detailKind = iota
	detKernel
	detIssue
	detAgent
)

// detailLine is one line of a detail screen: spans, or a device's share
// bar drawn across the width.
type detailLine struct {
	spans []span
	bar   *devRow
}

// detail is the detail screen of a device, a kernel, an agent or an issue: what it
// shows and its scroll position. Its lines are rebuilt from each new
// snapshot, so the screen stays live.
type detail struct {
	*common
	closer
	area
	kind  detailKind
	dev   model.DeviceKey
	kern  model.KernelID
	issue string
	agent model.AgentID
	title string
	lines []detailLine
	off   int
}

func (ds *detail) rank() layerRank { return rankScreen }

// Update scrolls; esc or enter closes the detail, ? shows the help in its
// place, and the new snapshot's lines replace the old ones.
func (ds *detail) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case adoptedMsg:
		ds.rebuild()
	case tea.MouseWheelMsg:
		ds.off = max(ds.off+wheelDelta(tea.Mouse(msg)), 0)
	case tea.KeyPressMsg:
		switch act := ds.keys.lookup(msg); act {
		case actQuit:
			ds.send(quitMsg{})
		case actBack, actDetail:
			ds.close()
		case actHelp:
			ds.close()
			ds.send(helpMsg{})
		default:
			ds.scroll(&ds.off, act)
		}
	}
	return nil
}

func (ds *detail) rebuild() {
	d := ds.d
	now := ds.now()
	switch ds.kind {
	case detDevice:
		di, ok := d.devIndex[ds.dev]
		if !ok {
			ds.lines = []detailLine{text(lvlWarn, "device "+ds.dev.String()+" is no longer in the inventory")}
			return
		}
		ds.title = d.devs[di].label
		ds.lines = deviceDetail(d, di)
	case detKernel:
		ki, ok := d.kernelIndex(ds.kern)
		if !ok {
			ds.lines = []detailLine{text(lvlWarn, "kernel "+string(ds.kern)+" is gone")}
			return
		}
		ds.title = "kernel " + d.kernels[ki].short
		ds.lines = kernelDetail(d, ki, now)
	case detIssue:
		for i := range d.issues {
			if d.issues[i].id == ds.issue {
				ds.title = d.issues[i].is.Code
				ds.lines = issueDetail(d, i)
				return
			}
		}
		ds.lines = []detailLine{text(lvlOK, "this issue has cleared")}
	case detAgent:
		for i := range d.agents {
			if d.agents[i].a.ID == ds.agent {
				ds.title = "agent " + string(ds.agent)
				ds.lines = agentDetail(d, i)
				return
			}
		}
		ds.lines = []detailLine{text(lvlWarn, "agent "+string(ds.agent)+" is no longer in the agent config")}
	}
}

// wrapSpans breaks a line of spans into rows of at most w cells, cutting
// between graphemes, continuation rows indented by 4.
func wrapSpans(spans []span, w int) [][]span {
	if w <= 8 || spansWidth(spans) <= w {
		return [][]span{spans}
	}
	var out [][]span
	var cur []span
	used := 0
	for _, sp := range spans {
		t := sp.text
		for t != "" {
			room := w - used
			tw := width(t)
			if tw <= room {
				cur = append(cur, span{sp.lvl, t})
				used += tw
				break
			}
			head := ansi.Cut(t, 0, room)
			if head != "" {
				cur = append(cur, span{sp.lvl, head})
			}
			t = ansi.Cut(t, width(head), tw)
			out = append(out, cur)
			cur, used = []span{{lvlPlain, "    "}}, 4
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// View draws the title row and as many lines as fit.
func (ds *detail) View() []string {
	w, h := ds.w, ds.h
	body := ds.rows(w)
	return scrolled(ds.st, w, h, []span{{lvlFocus, " " + ds.title + " "}}, []span{{lvlDim, "esc back"}}, body, &ds.off)
}

// scrolled is a scrolling screen in h rows of w cells: its title row,
// then body from *off (clamped so the end shows no gap), blank rows below.
func scrolled(st *Styles, w, h int, title, info []span, body []string, off *int) []string {
	if h <= 0 {
		return nil
	}
	visible := max(h-1, 0)
	*off = min(*off, max(len(body)-visible, 0))
	rows := []string{titleRowOf(st, w, title, info, len(body), visible, *off)}
	for i := *off; i < len(body) && len(rows) < h; i++ {
		rows = append(rows, body[i])
	}
	for len(rows) < h {
		rows = append(rows, "")
	}
	return rows
}

// rows renders the detail lines at width w, wrapping long ones.
func (ds *detail) rows(w int) []string {
	st := ds.st
	var out []string
	for _, dl := range ds.lines {
		if dl.bar != nil {
			l := newLine(paint{})
			l.gap(2)
			r := dl.bar
			bw := min(max(w-4, 4), 80)
			amts, look, drifted := r.barLooks(false)
			st.renderBar(l, barLayout(amts, r.capF, bw), look, drifted)
			out = append(out, l.finish(w))
			continue
		}
		for _, sp := range wrapSpans(dl.spans, w-2) {
			l := newLine(paint{})
			l.gap(1)
			putSpans(l, st, sp, w-1)
			out = append(out, l.finish(w))
		}
	}
	return out
}

// openDetail opens the detail of the focused pane's selected row; the
// pane says what that is. An issue that names a kernel, a device or an
// agent on screen goes there instead.
func (a *App) openDetail() {
	if a.d == nil {
		return
	}
	ds, note := a.panes[a.focus].detailFor()
	if ds == nil {
		if note != "" {
			a.flashf(lvlInfo, note)
		}
		return
	}
	if ds.kind == detIssue {
		if r := a.issues.selectedIssue(); r != nil && a.jumpToIssue(r.is) {
			return
		}
	}
	ds.common = a.common
	ds.rebuild()
	a.push(ds)
}
