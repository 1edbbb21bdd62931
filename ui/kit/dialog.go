package kit

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Dialog is a modal question with two buttons, Cancel and OK. Cancel has
// the focus when it opens, so an Enter pressed by reflex does nothing
// (k9s's delete dialog, nvitop's signal box). With expect set, OK does
// nothing until the typed text equals it (k9s's ShowConfirmAck). Whoever
// opens it says what OK (and a left button that is a choice) does.
type Dialog struct {
	*Common
	Closer
	Area
	// Kind is the opener's tag for what the dialog asks; the kit does
	// not read it.
	Kind  uint8
	Title string
	Body  [][]Span
	// ask says what to type, right above the field; foot comes after it.
	// Neither is cut on a small screen (the body is).
	Ask     [][]Span
	Foot    [][]Span
	OKLabel string
	// focusOK is false while Cancel has the focus.
	FocusOK bool
	Expect  string
	Input   *textinput.Model
	// note says why OK did nothing.
	note string
	// quit: the Discard dialog came from ctrl+c, OK quits too, and so
	// does a second ctrl+c.
	Quit bool

	// ok is what OK does.
	OK func() tea.Cmd
	// cancelLabel names the left button ("Cancel" when empty). With left
	// set the left button is a choice too (dlgFormat: main's slot-based
	// form, the default), and only esc cancels.
	CancelLabel string
	Left        func()
	// More says where the lines a small screen cuts from the body can be
	// read whole ("esc, then p: the whole plan"); without it the cut
	// says only that a larger window shows them.
	More string
	// Cancelled is the flash when the dialog is cancelled ("cancelled:
	// nothing written" when empty): a dialog that just vanishes leaves
	// the operator unsure whether Enter applied.
	Cancelled string
}

// Rank stacks a dialog over the screens.
func (d *Dialog) Rank() LayerRank { return RankDialog }

// confirmed reports whether OK may act: no typed confirmation asked, or
// the text typed matches.
func (d *Dialog) confirmed() bool {
	if d.Expect == "" {
		return true
	}
	if d.Input == nil {
		return false
	}
	// Several ids: any order, any spacing, each once.
	got, want := strings.Fields(d.Input.Value()), strings.Fields(d.Expect)
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}

// Update handles a key while the dialog is open (the dialog scope of the
// key map): tab (or ←/→ when there is nothing to type) moves between the
// buttons, enter presses the focused one, esc cancels; other keys go to
// the confirmation field. Typing the expected id never moves the focus:
// Apply is pressed only by choosing it (tab) and then Enter, and the
// dialog says so.
func (d *Dialog) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil // the wheel: nothing scrolls under a dialog
	}
	switch act := d.Keys.LookupIn(ScDialog, k); act {
	case ActQuit:
		d.Close()
		if d.Quit {
			// The second ctrl+c: quit, as asked.
			return d.OK()
		}
		d.Send(QuitMsg{})
		return nil
	case ActBack:
		d.cancel()
		return nil
	case actDlgSwitch:
		d.FocusOK = !d.FocusOK
		return nil
	case actDlgLeft, actDlgRight:
		if d.Input == nil {
			d.FocusOK = act == actDlgRight
			return nil
		}
	case actDlgPress:
		if !d.FocusOK && d.Left != nil {
			d.Close()
			d.Left()
			return nil
		}
		if !d.FocusOK {
			d.cancel()
			return nil
		}
		if !d.confirmed() {
			d.note = "type " + d.Expect + " exactly to apply (esc cancels)"
			return nil
		}
		d.Close()
		return d.OK()
	}
	if d.Input == nil {
		return nil
	}
	ti, cmd := d.Input.Update(k)
	d.Input = &ti
	d.note = ""
	return cmd
}

// cancel closes a dialog without doing what it asked, and says so.
func (d *Dialog) cancel() {
	d.Close()
	msg := d.Cancelled
	if msg == "" {
		msg = "cancelled: nothing written"
	}
	d.Flashf(LvlInfo, msg)
}

// Hints is the dialog's key line, from the key map's dialog scope: ←/→
// only when there is nothing to type (they move in the field then).
func (d *Dialog) Hints() string {
	var out []string
	desc := ""
	for _, b := range d.Keys.BindingList {
		if b.Short&ScDialog == 0 || (d.Input != nil && (b.Act == actDlgLeft || b.Act == actDlgRight)) {
			continue
		}
		h := b.Key.Help()
		if len(out) > 0 && h.Desc == desc {
			// Keys with the same words share them.
			last := out[len(out)-1]
			out[len(out)-1] = strings.Replace(last, ": ", "/"+h.Key+": ", 1)
			continue
		}
		out = append(out, h.Key+": "+h.Desc)
		desc = h.Desc
	}
	return strings.Join(out, " · ")
}

// View draws the dialog as a box for a screen of the size SetSize gave:
// at most 84 cells wide and two fewer than the screen, its rows above the
// footer, which stays.
func (d *Dialog) View() []string { return d.box(max(d.W-2, 20), d.H-1) }

// box draws the dialog as a box of at most w cells and h rows. When the
// body is too long for the screen it is cut, never the confirmation field
// or the buttons.
func (d *Dialog) box(w, h int) []string {
	st := d.St
	bw := min(w, 84)
	inner := bw - 4
	wrap := func(dst []string, sp []Span) []string {
		for _, row := range WrapWords(sp, inner) {
			l := NewLine(Paint{})
			PutSpans(l, st, row, inner)
			dst = append(dst, l.Finish(inner))
		}
		return dst
	}
	var body, tail, foot []string
	for _, sp := range d.Body {
		body = wrap(body, sp)
	}
	for _, sp := range d.Ask {
		tail = wrap(tail, sp)
	}
	if d.Input != nil {
		d.Input.SetWidth(max(inner-4, 8))
		l := NewLine(Paint{})
		v := d.Input.View()
		l.PutW(Paint{}, v, Width(v))
		tail = append(tail, ClampLine(l.Finish(inner), inner))
		switch {
		case d.Input.Value() != "" && !d.confirmed():
			tail = wrap(tail, []Span{{LvlDim, "does not match yet"}})
		case d.confirmed() && d.FocusOK:
			tail = wrap(tail, []Span{{LvlOK, "matches: Enter applies"}})
		case d.confirmed():
			tail = wrap(tail, []Span{{LvlOK, "matches: "}, {LvlAccent, "tab"}, {LvlOK, " to " + d.OKLabel + ", then Enter"}, {LvlDim, " (Enter now cancels)"}})
		}
	}
	if d.note != "" {
		tail = wrap(tail, []Span{{LvlWarn, d.note}})
	}
	for _, sp := range d.Foot {
		foot = wrap(foot, sp)
	}
	// Buttons: the focused one reversed and marked, so it shows in mono too.
	button := func(label string, focused bool) (Paint, string) {
		if focused {
			return st.Selected, st.G.Cursor + " " + label + " "
		}
		return st.Text, "  " + label + " "
	}
	bl := NewLine(Paint{})
	cancel := d.CancelLabel
	if cancel == "" {
		cancel = "Cancel"
	}
	cp, ct := button(cancel, !d.FocusOK)
	okp, okt := button(d.OKLabel, d.FocusOK)
	if d.FocusOK && !d.confirmed() {
		okp = st.Dim
	}
	bl.Put(cp, "["+ct+"]")
	bl.Gap(3)
	bl.Put(okp, "["+okt+"]")
	buttons := []string{Spaces(inner), bl.Finish(inner)}
	buttons = wrap(buttons, []Span{{LvlDim, d.Hints()}})

	room := h - 2 // the box's borders
	if len(body)+len(tail)+len(foot)+len(buttons) > room {
		foot = nil
	}
	if over := len(body) + len(tail) + len(buttons) - room; over > 0 {
		keep := max(len(body)-over-1, 0)
		more := len(body) - keep
		// Where to read them is the opener's to say: the plan was named
		// for every dialog, the take-over's and the undo's included,
		// where esc then p shows something else or nothing.
		where := d.More
		if where == "" {
			where = "a larger window shows them"
		}
		body = wrap(body[:keep], []Span{{LvlDim, st.G.Ellipsis + " " + Plural(more, "more line") + " (" + where + ")"}})
	}
	lines := append(append(append(body, tail...), foot...), buttons...)

	g := st.G
	var out []string
	top := NewLine(Paint{})
	top.Put(st.Border, g.CornerTL+g.Rule)
	title := Truncate(" "+d.Title+" ", inner, g.Ellipsis)
	top.Put(st.TitleFocused, title)
	top.Put(st.Border, Repeat(g.Rule, bw-3-Width(title))+g.CornerTR)
	out = append(out, top.Finish(bw))
	for _, b := range lines {
		l := NewLine(Paint{})
		l.Put(st.Border, g.Sep)
		l.Gap(1)
		l.PutW(Paint{}, b, inner)
		l.Gap(1)
		l.Put(st.Border, g.Sep)
		out = append(out, l.Finish(bw))
	}
	bot := NewLine(Paint{})
	bot.Put(st.Border, g.CornerBL+Repeat(g.Rule, bw-2)+g.CornerBR)
	out = append(out, bot.Finish(bw))
	return out
}

// OverlayBox draws a dialog's box over rows (h rows of w cells),
// centred; the rows it covers are replaced whole.
func OverlayBox(rows, box []string, w, h int) []string {
	bw := 0
	if len(box) > 0 {
		bw = Width(box[0])
	}
	top := max((h-len(box))/2, 0)
	left := max((w-bw)/2, 0)
	for i, b := range box {
		y := top + i
		if y >= h-1 { // the footer stays
			break
		}
		rows[y] = Spaces(left) + b + Spaces(w-left-bw)
	}
	return rows
}

// WrapWords breaks a line of spans into rows of at most w cells at spaces
// where it can (a word longer than a row is cut), continuation rows
// indented by 4.
func WrapWords(spans []Span, w int) [][]Span {
	if w <= 8 || SpansWidth(spans) <= w {
		return [][]Span{spans}
	}
	var out [][]Span
	var cur []Span
	used := 0
	newRow := func() {
		out = append(out, cur)
		cur, used = []Span{{LvlPlain, "    "}}, 4
	}
	for _, sp := range spans {
		for _, tok := range strings.SplitAfter(sp.Text, " ") {
			for tok != "" {
				tw := Width(tok)
				switch {
				case used+Width(strings.TrimRight(tok, " ")) <= w:
					if used+tw > w { // the word fits, its space does not
						tok = strings.TrimRight(tok, " ")
					}
					cur = append(cur, Span{sp.Lvl, tok})
					used += Width(tok)
					tok = ""
				case used > 4 || (used > 0 && len(out) == 0):
					newRow()
				default: // a word longer than a whole row
					head := ansi.Cut(tok, 0, w-used)
					cur = append(cur, Span{sp.Lvl, head})
					tok = ansi.Cut(tok, Width(head), tw)
					newRow()
				}
			}
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
