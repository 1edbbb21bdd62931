package console

import (
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// overNode is the fixture node whose over-capacity issue says what the
// engine says (the device's key, then the amounts) with held shares.
func overNode(held string) *model.Snapshot {
	s := fake.Node(fake.Options{})
	s.Issues = slices.Clone(s.Issues)
	for i := range s.Issues {
		if s.Issues[i].Code == model.IssueOverCapacity {
			s.Issues[i].Message = "cuda:" + string(fake.GPU(1)) + " is held beyond its capacity: " + held + " of 1.00 (agents i-gpu-node01-numa0)"
		}
	}
	return s
}

// TestIssueNamesDeviceByLabel: an issue names a device as the devices
// pane does, the label first and the id abbreviated, so that at 80
// columns its amounts stay on the line; the full UUID pushed them off.
func TestIssueNamesDeviceByLabel(t *testing.T) {
	a := testApp(t, 80, 24, overNode("1.10"), Options{})
	var v, row string
	for range 4 { // tab to the Issues pane
		press(a, tab)
		v = screen(a)
		for _, l := range strings.Split(v, "\n") {
			if strings.Contains(l, "over-capacity") {
				row = l
			}
		}
		if row != "" {
			break
		}
	}
	if !strings.Contains(row, "GPU0 (…2d01) is held beyond its capacity: 1.10 of 1.00") {
		t.Errorf("the over-capacity row at 80 columns: %q\n%s", row, v)
	}
	if strings.Contains(v, string(fake.GPU(1))) {
		t.Errorf("the full UUID is shown:\n%s", v)
	}
}

// TestFlashFollowsIssueFigures: a new-issue flash says the issue's
// current figures while it lasts, not those of its first sighting (an
// over-capacity issue keeps its identity while its amounts move).
func TestFlashFollowsIssueFigures(t *testing.T) {
	quiet := fake.Node(fake.Options{})
	quiet.Issues = slices.DeleteFunc(slices.Clone(quiet.Issues), func(is model.Issue) bool { return is.Code == model.IssueOverCapacity })
	a := testApp(t, 120, 40, quiet, Options{})
	next := func(s *model.Snapshot) {
		s.Seq = a.Snap.Seq + 1
		a.adoptNow(s)
	}
	next(overNode("1.10"))
	if !strings.Contains(a.Flash.Text, "new issue: over-capacity: GPU0 (…2d01) is held beyond its capacity: 1.10 of 1.00") {
		t.Fatalf("flash %q", a.Flash.Text)
	}
	next(overNode("1.30"))
	if !strings.Contains(a.Flash.Text, "1.30 of 1.00") || strings.Contains(a.Flash.Text, "1.10") {
		t.Fatalf("the flash kept the first figures: %q", a.Flash.Text)
	}
	if v := screen(a); !strings.Contains(v, "1.30 of 1.00") {
		t.Errorf("the footer does not show the current figures:\n%s", v)
	}
	// Another flash is not rewritten by the issue.
	a.Flashf(0, "something else")
	next(overNode("1.40"))
	if a.Flash.Text != "something else" {
		t.Errorf("a later flash was replaced: %q", a.Flash.Text)
	}
}

// TestFlashKeepsAmountsAt80: at 80 columns a new over-capacity issue's
// flash leads with the device's label and keeps its amounts beside the
// footer's keys; the whole text ("over-capacity: GPU0 (…2d01) is held
// beyond its capacity: 1.10 of 1.00") was cut before the amounts.
func TestFlashKeepsAmountsAt80(t *testing.T) {
	quiet := fake.Node(fake.Options{})
	quiet.Issues = slices.DeleteFunc(slices.Clone(quiet.Issues), func(is model.Issue) bool { return is.Code == model.IssueOverCapacity })
	a := testApp(t, 80, 24, quiet, Options{})
	next := func(s *model.Snapshot) {
		s.Seq = a.Snap.Seq + 1
		a.adoptNow(s)
	}
	footer := func() string {
		rows := strings.Split(screen(a), "\n")
		return rows[len(rows)-1]
	}
	next(overNode("1.10"))
	if f := footer(); !strings.Contains(f, "GPU0 over capacity: 1.10 of 1.00") {
		t.Fatalf("the 80-column footer lost the label or the amounts: %q", f)
	}
	next(overNode("1.30"))
	if f := footer(); !strings.Contains(f, "GPU0 over capacity: 1.30 of 1.00") {
		t.Errorf("the 80-column footer does not follow the figures: %q", f)
	}
	// Where the whole text fits, it is the one shown.
	wide := testApp(t, 200, 40, quiet, Options{})
	s := overNode("1.10")
	s.Seq = wide.Snap.Seq + 1
	wide.adoptNow(s)
	if v := screen(wide); !strings.Contains(v, "GPU0 (…2d01) is held beyond its capacity: 1.10 of 1.00") {
		t.Errorf("at 200 columns the flash is not the whole text:\n%s", v)
	}
}

// TestFirstScreenStartsOnNeediest: the first screen's cursor is on the
// device that most needs a look, the one over capacity, else the one most
// held; it started on GPU0, idle or not, with empty graphs.
func TestFirstScreenStartsOnNeediest(t *testing.T) {
	// Over capacity on the second row: GPU1 (0.90 held) made 0.50, GPU0
	// (1.10 held) made 2.00.
	over := fake.Node(fake.Options{})
	devs := slices.Clone(over.Devices)
	for i := range devs {
		switch devs[i].ID {
		case fake.GPU(1):
			devs[i].Capacity = model.NewDec(200, -2)
		case fake.GPU(2):
			devs[i].Capacity = model.NewDec(50, -2)
		}
	}
	over.Devices = devs
	over.Issues = slices.DeleteFunc(slices.Clone(over.Issues), func(is model.Issue) bool { return is.Code == model.IssueOverCapacity })
	a := testApp(t, 120, 40, over, Options{})
	if r := a.d.Devs[a.devices.Cursor]; r.Label != "GPU1" || !r.Over {
		t.Errorf("the cursor starts on %s (over %v), want GPU1, the one over capacity", r.Label, r.Over)
	}

	// Nothing over capacity: the most held, MIG 3/0 (1 of 1).
	calm := fake.Node(fake.Options{})
	devs = slices.Clone(calm.Devices)
	for i := range devs {
		if devs[i].ID == fake.GPU(1) {
			devs[i].Capacity = model.NewDec(200, -2)
		}
	}
	calm.Devices = devs
	calm.Issues = slices.DeleteFunc(slices.Clone(calm.Issues), func(is model.Issue) bool { return is.Code == model.IssueOverCapacity })
	a = testApp(t, 120, 40, calm, Options{})
	if r := a.d.Devs[a.devices.Cursor]; r.Label != "MIG 3/0" {
		t.Errorf("nothing over capacity: the cursor starts on %s, want MIG 3/0 (all of it held)", r.Label)
	}

	// A node where nothing is held yet leaves the start open: the first
	// snapshot that holds something places it, unless a key came first.
	empty := fake.Node(fake.Options{})
	empty.SetKernels(nil)
	fake.Finish(empty)
	for i := range empty.Devices {
		empty.Devices[i].Telemetry = nil
	}
	empty.Issues = nil
	a = testApp(t, 120, 40, empty, Options{})
	if a.devices.Cursor != 0 {
		t.Fatalf("an empty node: the cursor starts on row %d", a.devices.Cursor)
	}
	next := *over
	next.Seq = a.Snap.Seq + 1
	a.adoptNow(&next)
	if r := a.d.Devs[a.devices.Cursor]; r.Label != "GPU1" {
		t.Errorf("once something is held: the cursor is on %s, want GPU1", r.Label)
	}
	// Settled: later snapshots leave the cursor where it is.
	later := *calm
	later.Seq = a.Snap.Seq + 1
	a.adoptNow(&later)
	if r := a.d.Devs[a.devices.Cursor]; r.Label != "GPU1" {
		t.Errorf("a later snapshot moved the settled cursor to %s", r.Label)
	}
}
