package console

import (
	"slices"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// TestFooterKeepsHelpAndQuit: at every width where "? help • q quit"
// fits at all, the footer shows both, for an operator and a viewer, with
// and without --ascii; the other items shorten and drop first.
func TestFooterKeepsHelpAndQuit(t *testing.T) {
	for _, ro := range []bool{false, true} {
		for _, ascii := range []bool{false, true} {
			a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{ReadOnly: ro, ASCII: ascii})
			for w := 20; w <= 220; w++ {
				f := stripANSI(a.shortHelpLine(w))
				if kit.Width(f) > w {
					t.Fatalf("ro=%v ascii=%v w=%d: footer %d cells: %q", ro, ascii, w, kit.Width(f), f)
				}
				if !strings.Contains(f, "? help") || !strings.Contains(f, "q quit") {
					t.Fatalf("ro=%v ascii=%v w=%d: footer lost help or quit: %q", ro, ascii, w, f)
				}
			}
			f := stripANSI(a.shortHelpLine(80))
			if !strings.HasPrefix(f, "tab next pane") || strings.Contains(f, "(!x inverts)") {
				t.Errorf("ro=%v: at 80 the first items should stay, shortened: %q", ro, f)
			}
		}
	}
	// The fleet console shares the footer: the same guarantee for any list
	// with help and quit in it.
	st := testStyles(t, "dark", false)
	bs := []key.Binding{
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open node console (ssh)")),
		key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter nodes")),
		key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
	}
	for w := 20; w < 60; w++ {
		if f := stripANSI(kit.ShortHelpOf(st, bs, w)); !strings.HasSuffix(strings.TrimRight(f, " "), "? help • q quit") {
			t.Fatalf("w=%d: %q", w, f)
		}
	}
}

// TestHeaderKeepsNameAndHealth: at 80 columns the header's first line
// names the node and the device source's health; nothing on the second
// line is cut to a stub.
func TestHeaderKeepsNameAndHealth(t *testing.T) {
	s := fake.Node(fake.Options{})
	s.Node = "gpu-node01.cluster.example"
	s.DraftFormat = true
	a := testApp(t, 80, 24, s, Options{})
	h := a.viewHeader(80)
	first := stripANSI(h[0])
	mustContain(t, "header", first, "fgtop gpu-node01.cluster.example", "NVML ok")
	for _, ln := range h {
		if strings.Contains(stripANSI(ln), "…") {
			t.Errorf("header line cut: %q", stripANSI(ln))
		}
	}
}

// TestKernelColumnsDropInOrder: a column shows at a width only if every
// more important column shows too, so a wider terminal never loses a
// column a narrower one had (AGE and SESSION vanished when a MIG column
// appeared).
func TestKernelColumnsDropInOrder(t *testing.T) {
	d := render.Derive(fake.Node(fake.Options{}), render.DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	for _, on := range []string{"", "ON GPU0"} {
		prev := map[string]bool{}
		for w := 20; w <= 320; w++ {
			now := map[string]bool{}
			for _, c := range kernelColumns(w, d, d.KernMeas, on, "") {
				now[c.Key] = true
			}
			for k := range prev {
				if !now[k] {
					t.Fatalf("on=%q: column %s shows at %d but not at %d", on, k, w-1, w)
				}
			}
			prev = now
		}
	}
	prevA, prevU := false, false
	for w := 30; w <= 320; w++ {
		c := deviceColumns(w, d.DevMeas)
		for _, x := range []struct {
			Name      string
			was, isOn bool
		}{{"ALLOC", prevA, c.sparkA > 0}, {"BUSY", prevU, c.sparkU > 0}} {
			if x.was && !x.isOn {
				t.Fatalf("device column %s shows at %d but not at %d", x.Name, w-1, w)
			}
		}
		prevA, prevU = c.sparkA > 0, c.sparkU > 0
	}
}

// TestKernelColumnsStayAsKernelsComeAndGo: the kernel table's columns
// are the node's and the width's: at each width the same columns show
// whether or not a kernel holds a MIG slice (at 80 columns a 10G-MIG
// column came with the MIG kernel and pushed TYPE, CPU, AGE and SESSION
// out).
func TestKernelColumnsStayAsKernelsComeAndGo(t *testing.T) {
	opts := render.DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}
	with := fake.Node(fake.Options{})
	without := fake.Node(fake.Options{})
	var ks []*model.Kernel
	for _, k := range without.Kernels() {
		mig := false
		for sl := range k.Alloc {
			mig = mig || sl.MinorType() != ""
		}
		if !mig {
			ks = append(ks, k)
		}
	}
	if len(ks) == len(without.Kernels()) {
		t.Fatal("the fake node has no kernel on a MIG slice")
	}
	without.SetKernels(ks)
	fake.Finish(without)
	dw := render.Derive(with, opts, nil)
	dn := render.Derive(without, opts, nil)
	keys := func(d *render.Derived, w int) []string {
		var out []string
		for _, c := range kernelColumns(w, d, d.KernMeas, "", "") {
			out = append(out, c.Key)
		}
		return out
	}
	for w := 20; w <= 320; w++ {
		if a, b := keys(dw, w), keys(dn, w); !slices.Equal(a, b) {
			t.Fatalf("width %d: with a MIG kernel %v, without %v", w, a, b)
		}
	}
	if k := keys(dn, 80); !slices.Contains(k, "cpu") || !slices.Contains(k, "type") {
		t.Errorf("80 columns: %v lacks CPU or TYPE", k)
	}
}

// TestHelpListsShownColumns: the help explains the columns this width
// draws and no other (BUSY exists only on wide terminals).
func TestHelpListsShownColumns(t *testing.T) {
	for _, sz := range []struct {
		W, H int
		busy bool
	}{{80, 24, false}, {220, 60, true}} {
		a := testApp(t, sz.W, sz.H, fake.Node(fake.Options{}), Options{})
		a.View()
		body := strings.Join(helpLines(a, sz.W), "\n")
		has := strings.Contains(stripANSI(body), "BUSY")
		dc := deviceColumns(a.devices.W, a.d.DevMeas)
		if has != (dc.sparkU > 0) || has != sz.busy {
			t.Errorf("%dx%d: help lists BUSY %v, the screen draws it %v", sz.W, sz.H, has, dc.sparkU > 0)
		}
		for _, c := range []string{"USER", "GMEM", "STATE", "AGE"} {
			shown := slices.ContainsFunc(a.Kernels.cols, func(k kernCol) bool { return k.Title == c })
			if strings.Contains(stripANSI(body), "   "+c) != shown {
				t.Errorf("%dx%d: column %s shown %v, in the help %v", sz.W, sz.H, c, shown, !shown)
			}
		}
	}
}

// TestFilterSearchesAllGPUs: / looks at every kernel whichever device is
// selected, says so, marks the devices holding a match and offers esc to
// go back to the selected GPU.
func TestFilterSearchesAllGPUs(t *testing.T) {
	a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{})
	a.View()
	sel := a.d.Devs[a.devices.Cursor].Label
	typeKeys(a, "/type:bat")
	a.Update(keyCode(tea.KeyEnter))
	want := 0
	f := render.CompileFilter("type:bat")
	for i := range a.d.Kernels {
		if f.Match(&a.d.Kernels[i]) {
			want++
		}
	}
	if want < 2 || len(a.Kernels.Showing.Rows) != want {
		t.Fatalf("filter shows %d kernels, %d match on the node", len(a.Kernels.Showing.Rows), want)
	}
	frame := stripANSI(a.View().Content)
	mustContain(t, "filtered", frame, "matching /type:bat on the node (3)", "esc back to "+sel)
	marked := 0
	for i := range a.d.Devs {
		holds := false
		for _, ki := range a.Kernels.Showing.Rows {
			holds = holds || slices.Contains(a.d.Devs[i].Kernels, ki)
		}
		if a.Kernels.matchDevs[i] != holds && len(a.d.Devs[i].Children) == 0 {
			t.Errorf("device %s: marked %v, holds a match %v", a.d.Devs[i].Label, a.Kernels.matchDevs[i], holds)
		}
		if a.Kernels.matchDevs[i] {
			marked++
		}
	}
	if marked == 0 || marked == len(a.d.Devs) {
		t.Fatalf("%d of %d devices marked", marked, len(a.d.Devs))
	}
	if strings.Count(frame, "•GPU") != marked {
		t.Errorf("%d device rows drawn with the mark, %d marked:\n%s", strings.Count(frame, "•GPU"), marked, frame)
	}
	a.Update(keyCode(tea.KeyEscape))
	frame = stripANSI(a.View().Content)
	mustContain(t, "after esc", frame, "Kernels on "+sel)
	mustNotContain(t, "after esc", frame, "•GPU", "on the node")
	typeKeys(a, "/zzzz")
	a.Update(keyCode(tea.KeyEnter))
	mustContain(t, "no match", stripANSI(a.View().Content), "no kernel on the node matches /zzzz")
	// A mistyped field matches nothing too: it says which was meant.
	a.Update(keyCode(tea.KeyEscape))
	typeKeys(a, "/usr:bb31")
	a.Update(keyCode(tea.KeyEnter))
	mustContain(t, "a mistyped field", stripANSI(a.View().Content), "(usr: is no filter field; user:?)")
}

// TestEditorFooterKeepsHelpAndQuit: in the partition editor at 80
// columns and narrower, the footer offers help and quit (ctrl+c: q is a letter
// there), with plan and apply; the least needed items drop first.
func TestEditorFooterKeepsHelpAndQuit(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	for _, w := range []int{60, 80, 120} {
		a := testApp(t, w, 24, snap, Options{Actor: alice, Desk: testDesk(path, snap)})
		typeKeys(a, "e")
		if a.ed() == nil {
			t.Fatal("no editor")
		}
		f := stripANSI(a.ed().Footer(w))
		for _, want := range []string{"? help", "ctrl+c quit", "p plan", "A apply"} {
			if !strings.Contains(f, want) {
				t.Errorf("w=%d: editor footer lacks %q: %q", w, want, f)
			}
		}
		a.Update(keyCode(tea.KeyEscape))
	}
	// Narrower, help and quit stay while they fit at all: at 40 columns
	// quit was left out for apply.
	a := testApp(t, 80, 24, snap, Options{Actor: alice, Desk: testDesk(path, snap)})
	typeKeys(a, "e")
	for w := 24; w < 60; w++ {
		if f := stripANSI(a.ed().Footer(w)); !strings.Contains(f, "? help") || !strings.Contains(f, "ctrl+c quit") {
			t.Errorf("w=%d: editor footer %q", w, f)
		}
	}
}

// TestFlashKeepsHelpAndQuit: a flash (new issues arrive every few seconds
// on a busy node, and on the demo) does not take help and quit out of the
// 80-column footer; the flash shortens instead.
func TestFlashKeepsHelpAndQuit(t *testing.T) {
	for _, ascii := range []bool{false, true} {
		a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{ASCII: ascii})
		a.Flashf(kit.LvlWarn, "4 new issues; over-capacity: cpu:16 is held beyond its capacity: 2 of 1 and more words")
		for _, w := range []int{60, 80, 220} {
			f := stripANSI(a.viewFooter(w))
			if kit.Width(f) > w {
				t.Fatalf("ascii=%v w=%d: footer %d cells: %q", ascii, w, kit.Width(f), f)
			}
			mustContain(t, "footer with a flash", f, "4 new issues", "? help", "q quit")
		}
	}
}

// TestFlashKeepsEssentialsEverywhere: under a flash the partition editor's
// footer (and a dialog's over it) keeps help and quit, and a search over
// every GPU keeps the way back to the selected one, as the main screen
// keeps help and quit.
func TestFlashKeepsEssentialsEverywhere(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	const flash = "3 new issues; over-capacity: cpu:16 is held beyond its capacity: 2 of 1"
	for _, w := range []int{80, 120} {
		a := testApp(t, w, 24, snap, Options{Actor: alice, Desk: testDesk(path, snap)})
		typeKeys(a, "e")
		if a.ed() == nil {
			t.Fatal("no editor")
		}
		a.Flashf(kit.LvlWarn, flash)
		f := stripANSI(a.viewFooter(w))
		mustContain(t, "editor footer with a flash", f, "3 new issues", "? help", "ctrl+c quit")
		if kit.Width(f) > w {
			t.Fatalf("w=%d: footer %d cells: %q", w, kit.Width(f), f)
		}
		a.Update(keyCode(tea.KeyEscape)) // leaves the editor: the next app may take the draft
	}
	a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{})
	a.View()
	sel := a.d.Devs[a.devices.Cursor].Label
	typeKeys(a, "/type:bat")
	a.Update(keyCode(tea.KeyEnter))
	a.Flashf(kit.LvlWarn, flash)
	f := stripANSI(a.viewFooter(80))
	mustContain(t, "search footer with a flash", f, "3 new issues", "esc back to "+sel, "? help", "q quit")
	// Too narrow for all: the way back goes first, help and quit stay.
	f = stripANSI(a.viewFooter(50))
	mustContain(t, "narrow search footer with a flash", f, "? help", "q quit")
}

// TestFlashUnderADialogKeepsItsKeys: under a dialog only the dialog's keys
// act (? and q do nothing there), yet a flash beside the take-over dialog
// kept "? help • q quit" (the tour): it keeps the dialog's way out and
// ctrl+c, which quits from there.
func TestFlashUnderADialogKeepsItsKeys(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	desk := testDesk(path, snap)
	editing(t, desk, snap, bob)
	a := testApp(t, 120, 40, snap, Options{Actor: alice, Desk: desk})
	typeKeys(a, "e")
	if a.topDialog() == nil {
		t.Fatalf("no take-over dialog:\n%s", screen(a))
	}
	a.Flashf(kit.LvlWarn, "3 new issues; over-capacity: cpu:16 is held beyond its capacity: 2 of 1")
	for _, w := range []int{80, 120} {
		f := stripANSI(a.viewFooter(w))
		mustContain(t, "a dialog's footer with a flash", f, "3 new issues", "esc cancel", "ctrl+c quit")
		for _, not := range []string{"? help", "q quit"} {
			if strings.Contains(strings.ReplaceAll(f, "ctrl+c quit", ""), not) {
				t.Errorf("w=%d: under a dialog the footer offers %q: %q", w, not, f)
			}
		}
	}
	typeKeys(a, "?q")
	if a.topDialog() == nil {
		t.Error("? or q closed the dialog")
	}
}
