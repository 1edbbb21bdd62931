package console

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestKernelDetailAgesAtRest: a kernel's detail on a node where nothing
// changes reads its age anew when the age turns over, with no new
// snapshot: the frame says when that is, and the detail is built again
// then (the tour: it read "seen 0s ago" until a snapshot came).
func TestKernelDetailAgesAtRest(t *testing.T) {
	now := fixedNow()
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{Now: func() time.Time { return now }})
	for a.focus != paneKernels {
		a.Update(keyCode(tea.KeyTab))
	}
	a.Update(keyCode(tea.KeyEnter))
	ds := detailOf(a)
	if ds == nil || ds.Kind != detKernel {
		t.Fatalf("no kernel detail opened: %+v", ds)
	}
	seen := func() string {
		v := stripANSI(a.View().Content)
		i := strings.Index(v, "seen ")
		if i < 0 {
			t.Fatalf("no seen in the detail:\n%s", v)
		}
		return strings.Fields(v[i:])[1]
	}
	first := seen()
	if ds.staleAt.IsZero() || a.staleAt.After(ds.staleAt) {
		t.Fatalf("the detail's age turns over at %v, the frame is stale at %v", ds.staleAt, a.staleAt)
	}
	now = ds.staleAt
	a.checkStale(now)
	if got := seen(); got == first {
		t.Errorf("at %v, when its age turns over, the detail still reads seen %s ago", now, got)
	}
}
