package console

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
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
