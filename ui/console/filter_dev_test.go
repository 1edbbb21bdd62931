package console

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// Issue 28: /dev:NAME shows the kernels holding something on the device
// NAME names, by any name fgtop shows (the label GPU1 or MIG 3/0, the
// abbreviated id …2d01, as history --device takes them).
func TestFilterByDevice(t *testing.T) {
	a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "f") // all kernels
	filter := func(f string) []string {
		a.Update(keyRune('/'))
		a.Update(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
		typeKeys(a, f)
		a.Update(keyCode(tea.KeyEnter))
		var got []string
		for _, ki := range a.Kernels.Showing.Rows {
			got = append(got, a.d.Kernels[ki].Short)
		}
		slices.Sort(got)
		return got
	}
	checked := 0
	for i := range a.d.Devs {
		r := &a.d.Devs[i]
		if len(r.Children) > 0 {
			continue // a MIG GPU: its slices hold
		}
		var want []string
		for _, ki := range r.Kernels {
			want = append(want, a.d.Kernels[ki].Short)
		}
		slices.Sort(want)
		want = slices.Compact(want)
		for _, name := range []string{r.Label, strings.ToLower(r.Label), r.Abbrev} {
			if got := filter("dev:" + name); !slices.Equal(got, want) {
				t.Errorf("/dev:%s: %v, want %v (the kernels on %s)", name, got, want, r.Key)
			}
		}
		if len(want) > 0 {
			checked++
		}
	}
	if checked < 2 {
		t.Fatalf("only %d devices hold kernels", checked)
	}
	if got := filter("dev:GPU99"); len(got) != 0 {
		t.Errorf("/dev:GPU99: %v", got)
	}
}

// :dev NAME selects the device by any name names takes; a name nothing
// has flashes what the node has.
func TestDevCommand(t *testing.T) {
	a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{})
	a.View()
	run := func(line string) {
		a.Update(keyRune(':'))
		typeKeys(a, line)
		a.Update(keyCode(tea.KeyEnter))
	}
	moved := 0
	for i := len(a.d.Devs) - 1; i >= 0; i-- {
		r := &a.d.Devs[i]
		if r.Label == "" {
			continue
		}
		for _, name := range []string{r.Label, r.Abbrev} {
			a.devices.selectRow(0)
			run("dev " + name)
			if a.devices.Cursor != i || a.focus != paneDevices {
				t.Errorf(":dev %s: cursor on %d (pane %d), want %d (%s)", name, a.devices.Cursor, a.focus, i, r.Key)
			}
		}
		if i != 0 {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no device to move to")
	}
	run("dev GPU99")
	if !strings.Contains(a.Flash.Text, `no device "GPU99" on this node; it has GPU0, GPU1`) {
		t.Errorf(":dev GPU99 flashed %q", a.Flash.Text)
	}
	// The next command that works takes that error away: it read as its
	// answer for the flash's seconds.
	run("dev GPU1")
	if a.Flash.Text != "" {
		t.Errorf(":dev GPU1 after :dev GPU99: flash %q", a.Flash.Text)
	}
	// At 80 columns the footer shows the names the screen uses: it listed
	// plugin keys and UUIDs first, cut before any of them.
	small := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{})
	small.View()
	small.Update(keyRune(':'))
	typeKeys(small, "dev GPU99")
	small.Update(keyCode(tea.KeyEnter))
	lines := strings.Split(screen(small), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `no device "GPU99" among 7, GPU0 to MIG`) {
		t.Errorf(":dev GPU99 at 80 columns: footer %q", last)
	}
}

// TestDevNotFoundAtEightyColumns: on a node whose list of devices the
// footer cuts at 80 columns (the demo's "it has GPU0, GPU1, GPU2, GPU3,
// …", its MIG instances lost), :dev and /dev: with a name that names none
// say how many devices there are and the first and last, whole; a typo
// of one names it instead. The full list stays where it fits.
func TestDevNotFoundAtEightyColumns(t *testing.T) {
	node := fake.Node(fake.Options{})
	a := testApp(t, 80, 24, node, Options{})
	a.View()
	var labels []string
	for i := range a.d.Devs {
		if l := a.d.Devs[i].Label; l != "" {
			labels = append(labels, l)
		}
	}
	first, last := labels[0], labels[len(labels)-1]
	if len(labels) < 5 || !strings.HasPrefix(last, "MIG ") || !strings.HasSuffix(last, "0") {
		t.Fatalf("the fake node's devices: %q", labels)
	}
	typo := strings.TrimSuffix(last, "0") + "1"
	count := fmt.Sprintf(`no device "GPU9" among %d, %s to %s`, len(labels), first, last)
	for _, c := range []struct{ do, want string }{
		{":dev GPU9", count},
		{":dev " + typo, fmt.Sprintf(`no device %q; did you mean %s?`, typo, last)},
		{"/dev:GPU9", count},
	} {
		a := testApp(t, 80, 24, node, Options{})
		a.View()
		typeKeys(a, c.do)
		a.Update(keyCode(tea.KeyEnter))
		lines := strings.Split(screen(a), "\n")
		if foot := lines[len(lines)-1]; !strings.Contains(foot, c.want) || !strings.Contains(foot, "? help") {
			t.Errorf("%s at 80 columns: footer %q, want %q", c.do, foot, c.want)
		}
		if !strings.Contains(a.Flash.Text, strings.Join(labels, ", ")) {
			t.Errorf("%s: the flash lost the full list: %q", c.do, a.Flash.Text)
		}
	}
	// Where the whole list fits, the footer shows it.
	wide := testApp(t, 200, 40, node, Options{})
	wide.View()
	typeKeys(wide, ":dev GPU9")
	wide.Update(keyCode(tea.KeyEnter))
	lines := strings.Split(screen(wide), "\n")
	if foot := lines[len(lines)-1]; !strings.Contains(foot, "it has "+strings.Join(labels, ", ")) {
		t.Errorf(":dev GPU9 at 200 columns: footer %q", foot)
	}
}

// TestHelpFooterAt40Columns: at 40 columns the help's footer keeps its
// ways out, q/esc back and ctrl+c quit: esc went
// first, and with it the only way back.
func TestHelpFooterAt40Columns(t *testing.T) {
	a := testApp(t, 40, 20, fake.Node(fake.Options{}), Options{})
	a.View()
	a.Update(keyRune('?'))
	lines := strings.Split(screen(a), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "esc back") || !strings.Contains(last, "ctrl+c quit") {
		t.Errorf("help footer at 40 columns: %q", last)
	}
}

// /dev:NAME resolves NAME as :dev and history --device do: a name that
// names no device says so in :dev's words, listing what the node has (it
// said only "no kernel on any GPU matches"), and a prefix of several
// devices' ids is refused as ambiguous, naming them (it matched kernels on
// all of them).
func TestFilterDevResolvesAsDev(t *testing.T) {
	a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{})
	a.View()
	filter := func(f string) {
		a.Update(keyRune('/'))
		a.Update(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
		typeKeys(a, f)
		a.Update(keyCode(tea.KeyEnter))
	}
	var gpus []*render.DevRow
	for i := range a.d.Devs {
		if r := &a.d.Devs[i]; !r.Child && r.Dev.UUID != "" && len(r.Kernels) > 0 {
			gpus = append(gpus, r)
		}
	}
	if len(gpus) < 2 {
		t.Fatalf("%d GPUs holding kernels, want 2", len(gpus))
	}

	// The words :dev flashes for the same name.
	a.Update(keyRune(':'))
	typeKeys(a, "dev GPU99")
	a.Update(keyCode(tea.KeyEnter))
	want := a.Flash.Text
	if !strings.Contains(want, gpus[0].Label) {
		t.Fatalf(":dev GPU99 flashed %q, naming no device", want)
	}
	a.Flash = kit.Flash{}
	filter("dev:GPU99")
	if n := len(a.Kernels.Showing.Rows); n != 0 {
		t.Errorf("/dev:GPU99 shows %d kernels", n)
	}
	if a.Kernels.Showing.FilterErr != want || a.Flash.Text != want {
		t.Errorf("/dev:GPU99 says %q (flash %q), want %q as :dev", a.Kernels.Showing.FilterErr, a.Flash.Text, want)
	}
	if s := screen(a); !strings.Contains(s, `no device "GPU99" on this node`) {
		t.Errorf("/dev:GPU99: the kernels table does not say so:\n%s", s)
	}
	// A filter that matches, kept next, takes the word back (it stayed
	// until the flash timed out: the tour); another flash is left alone.
	filter("dev:" + gpus[0].Label)
	if len(a.Kernels.Showing.Rows) == 0 || a.Flash.Text != "" {
		t.Errorf("/dev:%s after /dev:GPU99: %d kernels, flash %q", gpus[0].Label, len(a.Kernels.Showing.Rows), a.Flash.Text)
	}
	filter("dev:GPU99")
	a.Flashf(kit.LvlInfo, "something else")
	filter("dev:" + gpus[0].Label)
	if a.Flash.Text != "something else" {
		t.Errorf("a kept filter took another flash: %q", a.Flash.Text)
	}

	// The common prefix of two GPUs' UUIDs names both.
	u0, u1 := gpus[0].Dev.UUID, gpus[1].Dev.UUID
	n := 0
	for n < min(len(u0), len(u1)) && u0[n] == u1[n] {
		n++
	}
	if n == 0 {
		t.Fatalf("UUIDs %s and %s share no prefix", u0, u1)
	}
	prefix := u0[:n]
	filter("dev:" + prefix)
	if n := len(a.Kernels.Showing.Rows); n != 0 {
		t.Errorf("/dev:%s shows %d kernels: an ambiguous name matched", prefix, n)
	}
	msg := a.Kernels.Showing.FilterErr
	if !strings.Contains(msg, "ambiguous") || !strings.Contains(msg, gpus[0].Label+",") || !strings.Contains(msg, gpus[1].Label) {
		t.Errorf("/dev:%s says %q, want it ambiguous between %s and %s", prefix, msg, gpus[0].Label, gpus[1].Label)
	}
	if a.Flash.Text != msg {
		t.Errorf("/dev:%s flashed %q, want %q", prefix, a.Flash.Text, msg)
	}

	// A whole UUID names one device again.
	filter("dev:" + u1)
	if a.Kernels.Showing.FilterErr != "" || len(a.Kernels.Showing.Rows) == 0 {
		t.Errorf("/dev:%s: %d kernels, error %q", u1, len(a.Kernels.Showing.Rows), a.Kernels.Showing.FilterErr)
	}
}
