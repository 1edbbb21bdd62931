package console

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestTickJustAfterSnapshotKeepsFrame: at rest the NVML poll's snapshot
// and the second's tick arrive a few tens of milliseconds apart; the tick
// keeps the frame the snapshot composed (it is the frame a fresh console
// draws at that moment, as if the tick had come then), and composes anew when the frame is older than
// tickSlack, when it expires a flash, or when something else dropped the
// frame. After every message the frame equals a fresh console's at the
// moment it was composed, never more than tickSlack before.
func TestTickJustAfterSnapshotKeepsFrame(t *testing.T) {
	now := fake.T0.Add(3 * time.Second)
	clock := func() time.Time { return now }
	s := fake.Large(4, 4)
	a := testApp(t, 160, 48, s, Options{Now: clock})
	// fresh is a fresh console's frame at the moment the kept frame was
	// composed: a kept frame is the one a tick that came then would draw.
	fresh := func() string {
		m, n := a.memo, now
		a.memo, now = nil, a.composedAt
		defer func() { a.memo, now = m, n }()
		return a.compose()
	}
	check := func(what string, wantComposed bool) {
		t.Helper()
		composed := !a.FrameOK
		if got, want := a.View().Content, fresh(); got != want {
			t.Fatalf("%s: the frame differs from a fresh one:\n%s", what, lineDiff(got, want))
		}
		if age := now.Sub(a.composedAt); age >= tickSlack {
			t.Errorf("%s: the frame is %v old", what, age)
		}
		if composed != wantComposed {
			t.Errorf("%s: composed a frame: %v, want %v", what, composed, wantComposed)
		}
	}
	step := func(d time.Duration) {
		now = now.Add(d)
		s = fake.Tick(s, 0)
		s.Time = now
		a.Update(SnapshotMsg{s})
		a.Update(frameMsg{})
	}
	a.View()
	for range 5 {
		// A snapshot, then the tick 40 ms later: one frame a second.
		step(960 * time.Millisecond)
		check("snapshot", true)
		now = now.Add(40 * time.Millisecond)
		a.Update(kit.TickMsg{})
		check("tick 40 ms after the snapshot", false)
	}
	// No snapshot: every tick composes (the ages move on).
	for range 3 {
		now = now.Add(time.Second)
		a.Update(kit.TickMsg{})
		check("tick without a snapshot", true)
	}
	// A flash that ends at the tick is gone from the frame at once.
	a.Flashf(kit.LvlInfo, "hello")
	a.View()
	now = a.Flash.Until
	step(0)
	a.View()
	now = now.Add(10 * time.Millisecond)
	a.Update(kit.TickMsg{})
	check("tick expiring a flash", true)
	// A snapshot the tick finds not yet drawn is drawn.
	step(time.Second)
	a.Update(kit.TickMsg{})
	check("tick before the snapshot's frame", true)
}

// lineDiff shows the lines where got and want differ, without colour.
func lineDiff(got, want string) string {
	g, w := strings.Split(stripANSI(got), "\n"), strings.Split(stripANSI(want), "\n")
	var b strings.Builder
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			fmt.Fprintf(&b, "line %d:\n got: %s\nwant: %s\n", i, gl, wl)
		}
	}
	return b.String()
}
