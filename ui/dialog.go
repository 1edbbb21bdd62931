package ui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

type dialogKind uint8

const (
	dlgApply    dialogKind = iota // apply the draft's plan
	dlgDiscard                    // leave the editor, losing the draft
	dlgTakeOver                   // take the draft from another operator
	dlgFormat                     // which format manual mode writes tables in
)

// dialog is a modal question with two buttons, Cancel and OK. Cancel has
// the focus when it opens, so an Enter pressed by reflex does nothing
// (k9s's delete dialog, nvitop's signal box). With expect set, OK does
// nothing until the typed text equals it (k9s's ShowConfirmAck). Whoever
// opens it says what OK (and a left button that is a choice) does.
type dialog struct {
	*kitCommon
	closer
	area
	kind  dialogKind
	title string
	body  [][]span
	// ask says what to type, right above the field; foot comes after it.
	// Neither is cut on a small screen (the body is).
	ask     [][]span
	foot    [][]span
	okLabel string
	// focusOK is false while Cancel has the focus.
	focusOK bool
	expect  string
	input   *textinput.Model
	// note says why OK did nothing.
	note string
	// quit: the Discard dialog came from ctrl+c, OK quits too, and so
	// does a second ctrl+c.
	quit bool

	// ok is what OK does.
	ok func() tea.Cmd
	// cancelLabel names the left button ("Cancel" when empty). With left
	// set the left button is a choice too (dlgFormat: main's slot-based
	// form, the default), and only esc cancels.
	cancelLabel string
	left        func()
}

func (d *dialog) rank() layerRank { return rankDialog }

// confirmed reports whether OK may act: no typed confirmation asked, or
// the text typed matches.
func (d *dialog) confirmed() bool {
	if d.expect == "" {
		return true
	}
	if d.input == nil {
		return false
	}
	// Several ids: any order, any spacing, each once.
	got, want := strings.Fields(d.input.Value()), strings.Fields(d.expect)
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
func (d *dialog) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil // the wheel: nothing scrolls under a dialog
	}
	switch act := d.keys.lookupIn(scDialog, k); act {
	case actQuit:
		d.close()
		if d.quit {
			// The second ctrl+c: quit, as asked.
			return d.ok()
		}
		d.send(quitMsg{})
		return nil
	case actBack:
		d.cancel()
		return nil
	case actDlgSwitch:
		d.focusOK = !d.focusOK
		return nil
	case actDlgLeft, actDlgRight:
		if d.input == nil {
			d.focusOK = act == actDlgRight
			return nil
		}
	case actDlgPress:
		if !d.focusOK && d.left != nil {
			d.close()
			d.left()
			return nil
		}
		if !d.focusOK {
			d.cancel()
			return nil
		}
		if !d.confirmed() {
			d.note = "type " + d.expect + " exactly to apply (esc cancels)"
			return nil
		}
		d.close()
		return d.ok()
	}
	if d.input == nil {
		return nil
	}
	ti, cmd := d.input.Update(k)
	d.input = &ti
	d.note = ""
	return cmd
}

// cancelDialog closes a dialog without doing what it asked, and says so:
// a dialog that just vanishes leaves the operator unsure whether Enter
// applied.
func (d *dialog) cancel() {
	d.close()
	msg := "cancelled: nothing written"
	switch d.kind {
	case dlgDiscard:
		msg += "; the draft is kept"
	case dlgTakeOver:
		msg += "; the draft stays with its holder"
	case dlgFormat:
		msg = "cancelled: the mode is unchanged"
	}
	d.flashf(lvlInfo, msg)
}

// hints is the dialog's key line, from the key map's dialog scope: ←/→
// only when there is nothing to type (they move in the field then).
func (d *dialog) hints() string {
	var out []string
	desc := ""
	for _, b := range d.keys.bindings {
		if b.short&scDialog == 0 || (d.input != nil && (b.act == actDlgLeft || b.act == actDlgRight)) {
			continue
		}
		h := b.key.Help()
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
func (d *dialog) View() []string { return d.box(max(d.w-2, 20), d.h-1) }

// box draws the dialog as a box of at most w cells and h rows. When the
// body is too long for the screen it is cut, never the confirmation field
// or the buttons.
func (d *dialog) box(w, h int) []string {
	st := d.st
	bw := min(w, 84)
	inner := bw - 4
	wrap := func(dst []string, sp []span) []string {
		for _, row := range wrapWords(sp, inner) {
			l := newLine(paint{})
			putSpans(l, st, row, inner)
			dst = append(dst, l.finish(inner))
		}
		return dst
	}
	var body, tail, foot []string
	for _, sp := range d.body {
		body = wrap(body, sp)
	}
	for _, sp := range d.ask {
		tail = wrap(tail, sp)
	}
	if d.input != nil {
		d.input.SetWidth(max(inner-4, 8))
		l := newLine(paint{})
		v := d.input.View()
		l.putW(paint{}, v, width(v))
		tail = append(tail, clampLine(l.finish(inner), inner))
		switch {
		case d.input.Value() != "" && !d.confirmed():
			tail = wrap(tail, []span{{lvlDim, "does not match yet"}})
		case d.confirmed() && d.focusOK:
			tail = wrap(tail, []span{{lvlOK, "matches: Enter applies"}})
		case d.confirmed():
			tail = wrap(tail, []span{{lvlOK, "matches: "}, {lvlAccent, "tab"}, {lvlOK, " to " + d.okLabel + ", then Enter"}, {lvlDim, " (Enter now cancels)"}})
		}
	}
	if d.note != "" {
		tail = wrap(tail, []span{{lvlWarn, d.note}})
	}
	for _, sp := range d.foot {
		foot = wrap(foot, sp)
	}
	// Buttons: the focused one reversed and marked, so it shows in mono too.
	button := func(label string, focused bool) (paint, string) {
		if focused {
			return st.Selected, st.G.Cursor + " " + label + " "
		}
		return st.Text, "  " + label + " "
	}
	bl := newLine(paint{})
	cancel := d.cancelLabel
	if cancel == "" {
		cancel = "Cancel"
	}
	cp, ct := button(cancel, !d.focusOK)
	okp, okt := button(d.okLabel, d.focusOK)
	if d.focusOK && !d.confirmed() {
		okp = st.Dim
	}
	bl.put(cp, "["+ct+"]")
	bl.gap(3)
	bl.put(okp, "["+okt+"]")
	buttons := []string{spaces(inner), bl.finish(inner)}
	buttons = wrap(buttons, []span{{lvlDim, d.hints()}})

	room := h - 2 // the box's borders
	if len(body)+len(tail)+len(foot)+len(buttons) > room {
		foot = nil
	}
	if over := len(body) + len(tail) + len(buttons) - room; over > 0 {
		keep := max(len(body)-over-1, 0)
		more := len(body) - keep
		body = wrap(body[:keep], []span{{lvlDim, st.G.Ellipsis + " " + plural(more, "more line") + " (esc, then p: the whole plan)"}})
	}
	lines := append(append(append(body, tail...), foot...), buttons...)

	g := st.G
	var out []string
	top := newLine(paint{})
	top.put(st.Border, g.CornerTL+g.Rule)
	title := truncate(" "+d.title+" ", inner, g.Ellipsis)
	top.put(st.TitleFocused, title)
	top.put(st.Border, repeat(g.Rule, bw-3-width(title))+g.CornerTR)
	out = append(out, top.finish(bw))
	for _, b := range lines {
		l := newLine(paint{})
		l.put(st.Border, g.Sep)
		l.gap(1)
		l.putW(paint{}, b, inner)
		l.gap(1)
		l.put(st.Border, g.Sep)
		out = append(out, l.finish(bw))
	}
	bot := newLine(paint{})
	bot.put(st.Border, g.CornerBL+repeat(g.Rule, bw-2)+g.CornerBR)
	out = append(out, bot.finish(bw))
	return out
}

// overlayBox draws a dialog's box over rows (h rows of w cells),
// centred; the rows it covers are replaced whole.
func overlayBox(rows, box []string, w, h int) []string {
	bw := 0
	if len(box) > 0 {
		bw = width(box[0])
	}
	top := max((h-len(box))/2, 0)
	left := max((w-bw)/2, 0)
	for i, b := range box {
		y := top + i
		if y >= h-1 { // the footer stays
			break
		}
		rows[y] = spaces(left) + b + spaces(w-left-bw)
	}
	return rows
}

// wrapWords breaks a line of spans into rows of at most w cells at spaces
// where it can (a word longer than a row is cut), continuation rows
// indented by 4.
func wrapWords(spans []span, w int) [][]span {
	if w <= 8 || spansWidth(spans) <= w {
		return [][]span{spans}
	}
	var out [][]span
	var cur []span
	used := 0
	newRow := func() {
		out = append(out, cur)
		cur, used = []span{{lvlPlain, "    "}}, 4
	}
	for _, sp := range spans {
		for _, tok := range strings.SplitAfter(sp.text, " ") {
			for tok != "" {
				tw := width(tok)
				switch {
				case used+width(strings.TrimRight(tok, " ")) <= w:
					if used+tw > w { // the word fits, its space does not
						tok = strings.TrimRight(tok, " ")
					}
					cur = append(cur, span{sp.lvl, tok})
					used += width(tok)
					tok = ""
				case used > 4 || (used > 0 && len(out) == 0):
					newRow()
				default: // a word longer than a whole row
					head := ansi.Cut(tok, 0, w-used)
					cur = append(cur, span{sp.lvl, head})
					tok = ansi.Cut(tok, width(head), tw)
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
