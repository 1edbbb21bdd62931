package console

import (
	"regexp"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// rowWith returns the first rendered list row that starts with s (after
// the cursor and mark cells).
func rowWith(t *testing.T, frame, s string) string {
	t.Helper()
	for _, l := range strings.Split(frame, "\n") {
		if r := []rune(stripANSI(l)); len(r) > 2 && strings.HasPrefix(string(r[2:]), s) {
			return l
		}
	}
	t.Fatalf("no line with %q in\n%s", s, stripANSI(frame))
	return ""
}

var (
	sgrRun    = regexp.MustCompile(`\x1b\[([0-9;]*)m([█▞]+)`)
	sgrMarker = regexp.MustCompile(`\x1b\[([0-9;]*)m▌`)
)

// TestKernelColoursOnBar: a device held by two kernels shows two colours
// inside its bar (two different SGR codes), each the colour of the
// kernel's mark in the kernel list; the part over capacity a third.
func TestKernelColoursOnBar(t *testing.T) {
	for _, theme := range []string{themes.Dark, themes.Light} {
		t.Run(theme, func(t *testing.T) {
			a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{Theme: themes.MustBuiltin(theme)})
			frame := a.View().Content
			row := rowWith(t, frame, "GPU0 ")
			bar := row[:strings.Index(row, "1.10/1.00")]
			codes := map[string]bool{}
			for _, m := range sgrRun.FindAllStringSubmatch(bar, -1) {
				codes[m[1]] = true
			}
			if len(codes) < 3 {
				t.Fatalf("GPU0's bar (two kernels, over capacity) has %d colours: %q", len(codes), bar)
			}
			marks := map[string]bool{}
			for _, k := range []string{"7d0e9b3a", "8e4c2a6f"} {
				m := sgrMarker.FindStringSubmatch(rowWith(t, frame, k))
				if m == nil {
					t.Fatalf("kernel %s has no mark: %q", k, rowWith(t, frame, k))
				}
				if !codes[m[1]] {
					t.Errorf("kernel %s's mark colour %q is not on GPU0's bar %v", k, m[1], codes)
				}
				marks[m[1]] = true
			}
			if len(marks) != 2 {
				t.Errorf("the two kernels on GPU0 share a colour: %v", marks)
			}
		})
	}
}

// TestKernelPatternsWithoutColour: with no colour (mono, which NO_COLOR
// picks) and in ASCII, kernels differ in shape on the bar, each shape the
// one marking its row, and the drifted kernel's share is marked.
func TestKernelPatternsWithoutColour(t *testing.T) {
	for _, tc := range []struct {
		Name  string
		ascii bool
	}{{"mono", false}, {"mono-ascii", true}} {
		t.Run(tc.Name, func(t *testing.T) {
			a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{Theme: themes.MustBuiltin(themes.Mono), ASCII: tc.ascii})
			frame := a.View().Content
			g := a.St.G
			shapes := func(dev, figs string) map[string]bool {
				row := stripANSI(rowWith(t, frame, dev+" "))
				bar := strings.TrimSpace(row[strings.Index(row, dev)+len(dev) : strings.Index(row, figs)])
				out := map[string]bool{}
				for _, r := range bar {
					if s := string(r); s != g.Free && s != g.Over {
						out[s] = true
					}
				}
				return out
			}
			gpu0 := shapes("GPU0", "1.10/1.00")
			if len(gpu0) != 2 {
				t.Fatalf("GPU0's bar (two kernels) shows shapes %v", gpu0)
			}
			for _, k := range []string{"7d0e9b3a", "8e4c2a6f"} {
				row := []rune(stripANSI(rowWith(t, frame, k)))
				if !gpu0[string(row[1])] {
					t.Errorf("kernel %s's mark %q is not a shape on GPU0's bar %v", k, string(row[1]), gpu0)
				}
			}
			// GPU2 carries a drift issue for kernel c41a8f2d.
			if gpu2 := shapes("GPU2", "0.80/1.00"); !gpu2[g.Drift] {
				t.Errorf("GPU2's bar does not mark the drifted kernel (%q): %v", g.Drift, gpu2)
			}
		})
	}
}

// TestLooksStableAndApart: a kernel's look depends on its id (a fresh
// cache gives the same looks), survives re-deriving, and kernels sharing
// a device differ while there are looks enough.
func TestLooksStableAndApart(t *testing.T) {
	s := fake.Node(fake.Options{})
	dims := kit.LookDims{Colours: 8, Shapes: 1}
	o := render.DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false), Looks: dims}
	c := render.NewDeriveCache()
	d1 := render.Derive(s, o, c)
	d2 := render.Derive(s, o, c)
	d3 := render.Derive(s, o, nil)
	for i := range d1.Kernels {
		if d1.Kernels[i].Look != d2.Kernels[i].Look || d1.Kernels[i].Look != d3.Kernels[i].Look {
			t.Errorf("kernel %s: looks %d, %d, %d", d1.Kernels[i].K.ID, d1.Kernels[i].Look, d2.Kernels[i].Look, d3.Kernels[i].Look)
		}
	}
	checkLooksApart(t, d1)
	shared := 0
	for _, r := range d1.Devs {
		if len(r.KernLook) > 1 {
			shared++
		}
	}
	if shared == 0 {
		t.Fatal("the fixture has no device held by two kernels")
	}
	for _, dm := range []kit.LookDims{{Colours: 1, Shapes: 1}, {Colours: 8, Shapes: 1}, {Colours: 5, Shapes: 4}, {Colours: 1, Shapes: 4}, {Colours: 8, Shapes: 4}} {
		if n := dm.N(); n < max(dm.Colours, dm.Shapes) || n > kit.MaxLooks {
			t.Errorf("%+v: %d looks", dm, n)
		}
	}
}

// TestLookChosenOncePlaced: a kernel seen before it holds a device (a
// pending kernel) gets its look when it is placed, apart from the kernels
// already there, not the one its id prefers regardless of them.
func TestLookChosenOncePlaced(t *testing.T) {
	full := fake.Node(fake.Options{})
	dims := kit.LookDims{Colours: 1, Shapes: 4}
	o := render.DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(true), Looks: dims}
	// Every kernel seen first with no holdings at all, as a pending one.
	bare := *full
	bare.Usage = nil
	c := render.NewDeriveCache()
	render.Derive(&bare, o, c)
	checkLooksApart(t, render.Derive(full, o, c))
}

// checkLooksApart fails where two kernels on one device share a look.
func checkLooksApart(t *testing.T, d *render.Derived) {
	t.Helper()
	for _, r := range d.Devs {
		seen := map[uint8]bool{}
		for _, l := range r.KernLook {
			if seen[l] {
				t.Errorf("%s: kernels share look %d: %v", r.Label, l, r.KernLook)
			}
			seen[l] = true
		}
	}
}
