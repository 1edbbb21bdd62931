package console

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

type detailKind uint8

const (
	detDevice detailKind = iota
	detKernel
	detIssue
	detAgent
	// detFit is a :fit answer: of the snapshot it was asked on, so it is
	// not rebuilt from newer ones.
	detFit
	// detJournal is :journal's list: as read when asked.
	detJournal
)

// detailLine is one line of a detail screen: spans, or a device's share
// bar drawn across the width.
type detailLine struct {
	spans []kit.Span
	bar   *render.DevRow
}

// detail is the detail screen of a device, a kernel, an agent or an issue: what it
// shows and its scroll position. Its lines are rebuilt from each new
// snapshot, so the screen stays live.
type detail struct {
	*common
	kit.Closer
	kit.Area
	Kind  detailKind
	Dev   model.DeviceKey
	kern  model.KernelID
	issue string
	Agent model.AgentID
	Title string
	Lines []detailLine
	off   int
	// staleAt is when an age in Lines turns over (zero: none does).
	staleAt time.Time
}

// Rank stacks a detail with the screens.
func (ds *detail) Rank() kit.LayerRank { return kit.RankScreen }

// footerKeys are the keys that work on a detail screen (Update): it
// scrolls and goes back; the main screen's panes, filter and sort keys
// do nothing here, so its footer does not offer them.
func (ds *detail) footerKeys() []key.Binding {
	return append([]key.Binding{
		key.NewBinding(key.WithKeys("j", "k"), key.WithHelp("j/k", "scroll")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}, ds.Keys.EssentialIn(ScMain)...)
}

// Footer is the detail's own footer help (kit.Footed).
func (ds *detail) Footer(w int) string { return kit.ShortHelpOf(ds.St, ds.footerKeys(), w) }

// FooterKeep is what the footer keeps beside a flash: back, help, quit.
func (ds *detail) FooterKeep() []key.Binding { return ds.footerKeys()[1:] }

// Update scrolls; esc or enter closes the detail, ? shows the help over
// it, and the new snapshot's lines replace the old ones.
func (ds *detail) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case kit.AdoptedMsg:
		ds.rebuild()
	case tea.MouseWheelMsg:
		ds.off = max(ds.off+kit.WheelDelta(tea.Mouse(msg)), 0)
	case tea.KeyPressMsg:
		switch act := ds.Keys.Lookup(msg); act {
		case kit.ActQuit:
			ds.Send(kit.QuitMsg{})
		case kit.ActBack, kit.ActDetail:
			ds.Close()
		case kit.ActHelp:
			// Over the detail: esc from the help comes back to it, where
			// the operator was reading.
			ds.Send(kit.HelpMsg{})
		default:
			ds.Scroll(&ds.off, act)
		}
	}
	return nil
}

func (ds *detail) rebuild() {
	d := ds.d
	now := ds.AgeNow()
	ds.staleAt = time.Time{}
	switch ds.Kind {
	case detFit, detJournal:
	case detDevice:
		di, ok := d.DevIndex[ds.Dev]
		if !ok {
			ds.Lines = []detailLine{text(kit.LvlWarn, "device "+ds.Dev.String()+" is no longer in the inventory")}
			return
		}
		ds.Title = d.Devs[di].Label
		ds.Lines = deviceDetail(d, di)
	case detKernel:
		ki, ok := d.KernelIndex(ds.kern)
		if !ok {
			ds.Lines = []detailLine{text(kit.LvlWarn, "kernel "+string(ds.kern)+" is gone")}
			return
		}
		ds.Title = "kernel " + d.Kernels[ki].Short
		clk := &ageClock{now: now, fixed: !ds.At.IsZero()}
		ds.Lines = kernelDetail(d, ki, clk)
		ds.staleAt = clk.next
	case detIssue:
		for i := range d.Issues {
			if d.Issues[i].ID == ds.issue {
				ds.Title = d.Issues[i].Is.Code
				ds.Lines = issueDetail(d, i)
				return
			}
		}
		ds.Lines = []detailLine{text(kit.LvlOK, "this issue has cleared")}
	case detAgent:
		for i := range d.Agents {
			if d.Agents[i].A.ID == ds.Agent {
				ds.Title = "agent " + string(ds.Agent)
				ds.Lines = agentDetail(d, i)
				return
			}
		}
		ds.Lines = []detailLine{text(kit.LvlWarn, "agent "+string(ds.Agent)+" is no longer in the agent config")}
	}
}

// wrapDetail breaks a detail line into rows of at most w cells: at spaces
// (a sentence such as :fit's answer read "the m / anager"), unless a word
// is longer than a continuation row (a path, an id), which is cut between
// graphemes where the row ends, as it would be anyway.
func wrapDetail(spans []kit.Span, w int) [][]kit.Span {
	for _, sp := range spans {
		for _, word := range strings.Fields(sp.Text) {
			if kit.Width(word) > w-4 {
				return wrapSpans(spans, w)
			}
		}
	}
	return kit.WrapWords(spans, w)
}

// wrapSpans breaks a line of spans into rows of at most w cells, cutting
// between graphemes, continuation rows indented by 4.
func wrapSpans(spans []kit.Span, w int) [][]kit.Span {
	if w <= 8 || kit.SpansWidth(spans) <= w {
		return [][]kit.Span{spans}
	}
	var out [][]kit.Span
	var cur []kit.Span
	used := 0
	for _, sp := range spans {
		t := sp.Text
		for t != "" {
			room := w - used
			tw := kit.Width(t)
			if tw <= room {
				cur = append(cur, kit.Span{Lvl: sp.Lvl, Text: t})
				used += tw
				break
			}
			head := ansi.Cut(t, 0, room)
			if head != "" {
				cur = append(cur, kit.Span{Lvl: sp.Lvl, Text: head})
			}
			t = ansi.Cut(t, kit.Width(head), tw)
			out = append(out, cur)
			cur, used = []kit.Span{{Lvl: kit.LvlPlain, Text: "    "}}, 4
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// View draws the title row and as many lines as fit.
func (ds *detail) View() []string {
	if !ds.staleAt.IsZero() && !ds.Now().Before(ds.staleAt) {
		ds.rebuild()
	}
	if !ds.staleAt.IsZero() {
		ds.ChangesAt(ds.staleAt)
	}
	w, h := ds.W, ds.H
	body := ds.Rows(w)
	return scrolled(ds.St, w, h, []kit.Span{{Lvl: kit.LvlFocus, Text: " " + ds.Title + " "}}, []kit.Span{{Lvl: kit.LvlDim, Text: "esc back"}}, body, &ds.off)
}

// scrolled is a scrolling screen in h rows of w cells: its title row,
// then body from *off (clamped so the end shows no gap), blank rows below.
func scrolled(st *kit.Styles, w, h int, title, info []kit.Span, body []string, off *int) []string {
	if h <= 0 {
		return nil
	}
	visible := max(h-1, 0)
	*off = min(*off, max(len(body)-visible, 0))
	rows := []string{kit.TitleRowOf(st, w, title, info, len(body), visible, *off)}
	for i := *off; i < len(body) && len(rows) < h; i++ {
		rows = append(rows, body[i])
	}
	for len(rows) < h {
		rows = append(rows, "")
	}
	return rows
}

// Rows renders the detail lines at width w, wrapping long ones.
func (ds *detail) Rows(w int) []string {
	st := ds.St
	var out []string
	for _, dl := range ds.Lines {
		if dl.bar != nil {
			l := kit.NewLine(kit.Paint{})
			l.Gap(2)
			r := dl.bar
			bw := min(max(w-4, 4), 80)
			amts, look, drifted := r.BarLooks(false)
			st.RenderBar(l, kit.BarLayout(amts, r.CapF, bw), look, drifted)
			out = append(out, l.Finish(w))
			continue
		}
		for _, sp := range wrapDetail(dl.spans, w-2) {
			l := kit.NewLine(kit.Paint{})
			l.Gap(1)
			kit.PutSpans(l, st, sp, w-1)
			out = append(out, l.Finish(w))
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
			a.Flashf(kit.LvlInfo, note)
		}
		return
	}
	if ds.Kind == detIssue {
		if r := a.Issues.selectedIssue(); r != nil && a.jumpToIssue(r.Is) {
			return
		}
	}
	ds.common = a.common
	ds.rebuild()
	a.push(ds)
}
