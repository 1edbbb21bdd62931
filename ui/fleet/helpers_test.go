package fleet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/hostile"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

func stripANSI(s string) string { return ansi.Strip(s) }

// nonASCII reports the first byte >= 0x80 of a frame (escape sequences
// stripped), with its line, or "".
func nonASCII(frame string) string {
	for i, ln := range strings.Split(ansi.Strip(frame), "\n") {
		for j := 0; j < len(ln); j++ {
			if ln[j] >= 0x80 {
				return fmt.Sprintf("line %d col %d: %q", i+1, j, ln)
			}
		}
	}
	return ""
}

// hostileNode is the fixture node with hostile.Payload planted in every
// string, as a fleet peer sends it: through the snapshot document and
// report.ParseLine, where outside text enters.
func hostileNode(t testing.TB, o fake.Options) *model.Snapshot {
	t.Helper()
	line, err := report.Marshal(report.FromSnapshot(hostile.Snapshot(fake.Node(o))), false)
	if err != nil {
		t.Fatal(err)
	}
	doc, _, err := report.ParseLine(line)
	if err != nil {
		t.Fatal(err)
	}
	s, err := doc.Model()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkClean fails t when the frame or the title holds a byte fgtop did
// not emit itself.
func checkClean(t testing.TB, what string, v tea.View) {
	t.Helper()
	if f := hostile.Foreign(v.Content); len(f) > 0 {
		t.Fatalf("%s: raw bytes on screen: %v", what, f)
	}
	if f := hostile.Foreign(v.WindowTitle); len(f) > 0 || strings.Contains(v.WindowTitle, "\n") {
		t.Fatalf("%s: raw bytes in the title %q: %v", what, v.WindowTitle, f)
	}
}

// waitTracker waits until the tracker's latest fleet is as ok wants (the
// tracker takes events on its own goroutine), failing t after 5 s.
func waitTracker(t testing.TB, tr *fleet.Tracker, ok func(*fleet.Fleet) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(tr.Latest()) {
		if time.Now().After(deadline) {
			t.Fatal("tracker did not take the events")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
