package console

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestSearchTitleSaysTheNode: / searches every kernel on the node, those
// holding no GPU too (the fake node's cpu-only kernel 1b9e0c44), so the
// title must not say the kernels it lists are on GPUs.
func TestSearchTitleSaysTheNode(t *testing.T) {
	a := testApp(t, 100, 30, fake.Node(fake.Options{}), Options{})
	a.View()
	typeKeys(a, "/1b9e0c44")
	a.Update(keyCode(tea.KeyEnter))
	if n := len(a.Kernels.Showing.Rows); n != 1 {
		t.Fatalf("the search shows %d kernels, want the cpu-only one", n)
	}
	k := a.d.Kernels[a.Kernels.Showing.Rows[0]]
	for _, d := range a.d.Devs {
		for _, ki := range d.Kernels {
			if a.d.Kernels[ki].K.ID == k.K.ID {
				t.Fatalf("kernel %s holds %s: the test needs one holding no device", k.K.ID, d.Label)
			}
		}
	}
	frame := stripANSI(a.View().Content)
	mustContain(t, "searched", frame, "matching /1b9e0c44 on the node (1)")
	mustNotContain(t, "searched", frame, "GPUs")
}
