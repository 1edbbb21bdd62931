package ui

import (
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/model"
)

type detailKind uint8

const (
	detDevice detailKind = iota
	detKernel
	detIssue
)

// detailLine is one line of a detail screen: spans, or a device's share
// bar drawn across the width.
type detailLine struct {
	spans []span
	bar   *devRow
}

// detailState is the open detail screen: what it shows and its scroll
// position. Its lines are rebuilt from each new snapshot, so the screen
// stays live.
type detailState struct {
	kind  detailKind
	dev   model.DeviceKey
	kern  model.KernelID
	issue string
	title string
	lines []detailLine
	off   int
}

func (ds *detailState) rebuild(a *App) {
	d := a.d
	now := a.now()
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

// viewDetailScreen draws the open detail screen.
func (a *App) viewDetailScreen(w, h int) []string {
	rows := a.viewHeader(w)
	ds := &a.detail
	body := a.detailRows(w)
	visible := max(h-len(rows)-2, 0)
	ds.off = min(ds.off, max(len(body)-visible, 0))
	title := []span{{lvlFocus, " " + ds.title + " "}}
	rows = append(rows, a.titleRow(w, title, []span{{lvlDim, "esc back"}}, len(body), visible, ds.off))
	for i := ds.off; i < len(body) && len(rows) < h-1; i++ {
		rows = append(rows, body[i])
	}
	for len(rows) < h-1 {
		rows = append(rows, "")
	}
	return append(rows, a.viewFooter(w))
}

// detailRows renders the detail lines at width w, wrapping long ones.
func (a *App) detailRows(w int) []string {
	st := a.st
	var out []string
	for _, dl := range a.detail.lines {
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

// openDetail opens the detail of the focused pane's selected row.
func (a *App) openDetail() {
	if a.d == nil {
		return
	}
	ds := detailState{}
	switch a.focus {
	case paneDevices:
		c := a.devices.cursor
		if c >= len(a.d.devs) {
			a.flashf(lvlInfo, "cpu and memory: "+a.d.host.cpuHeld+"/"+a.d.host.cpuCap+" cores, "+a.d.host.memHeld+"/"+a.d.host.memCap+" held")
			return
		}
		ds.kind, ds.dev = detDevice, a.d.devs[c].key
	case paneKernels:
		id := a.kernels.Selected()
		if id == "" {
			return
		}
		ds.kind, ds.kern = detKernel, model.KernelID(id)
	case paneIssues:
		r := a.issues.selectedIssue()
		if r == nil {
			return
		}
		if a.jumpToIssue(r.is) {
			return
		}
		ds.kind, ds.issue = detIssue, r.id
	default:
		return
	}
	a.detail = ds
	a.detail.rebuild(a)
	a.overlay = ovDetail
	a.invalidate()
}
