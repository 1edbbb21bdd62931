package console

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestOngoingOverCapacityFlashesOnce: the node-level warning about CPU
// cores time-shared across agents flashes when it starts, not each time
// a core joins it or a GPU's over-capacity amount moves (the demo flashed
// every few seconds); a condition worsening into an error, and a new
// device over capacity, flash.
func TestOngoingOverCapacityFlashesOnce(t *testing.T) {
	base := fake.Node(fake.Options{})
	a := testApp(t, 120, 40, base, Options{})
	gpu := base.Devices[0].Key()
	step := func(name string, issues []model.Issue, wantFlash bool) {
		t.Helper()
		s := *base
		s.Issues = issues
		a.Flash.Text = ""
		a.adopt(&s)
		if got := a.Flash.Text != ""; got != wantFlash {
			t.Errorf("%s: flash %v (%q), want %v", name, got, a.Flash.Text, wantFlash)
		}
	}
	cores := func(msg string) model.Issue {
		return model.Issue{Severity: model.SevWarning, Code: model.IssueOverCapacity, Message: msg}
	}
	gpuOver := func(amount string) model.Issue {
		return model.Issue{Severity: model.SevError, Code: model.IssueOverCapacity, Device: gpu,
			Message: gpu.String() + " is held beyond its capacity: " + amount + " of 1.00"}
	}
	step("time-sharing starts", []model.Issue{cores("1 CPU core(s) time-shared across agents: cpu:16 2 of 1")}, true)
	step("a core joins", []model.Issue{cores("2 CPU core(s) time-shared across agents: cpu:16 2 of 1, cpu:17 2 of 1")}, false)
	step("a core leaves", []model.Issue{cores("1 CPU core(s) time-shared across agents: cpu:17 2 of 1")}, false)
	step("a GPU goes over", []model.Issue{gpuOver("1.20"), cores("1 CPU core(s) time-shared across agents: cpu:17 2 of 1")}, true)
	step("its amount moves", []model.Issue{gpuOver("1.50"), cores("1 CPU core(s) time-shared across agents: cpu:17 2 of 1")}, false)
	step("time-sharing ends", []model.Issue{gpuOver("1.50")}, false)
	step("time-sharing starts again", []model.Issue{gpuOver("1.50"), cores("1 CPU core(s) time-shared across agents: cpu:3 2 of 1")}, true)
	// One agent alone now overbooks cpu:3: an error of that core.
	step("it worsens into an error", []model.Issue{gpuOver("1.50"), {Severity: model.SevError, Code: model.IssueOverCapacity,
		Device: model.DeviceKey{Name: "cpu", ID: "3"}, Message: "cpu:3 is held beyond its capacity: 2 of 1"}}, true)
}

// A new issue that clears while its flash lasts is said to have cleared:
// "new issue: GPU0 over capacity" stood beside a device within its
// capacity and an issues pane without it (the demo's overcommits last
// seconds).
func TestIssueFlashSaysCleared(t *testing.T) {
	base := fake.Node(fake.Options{})
	a := testApp(t, 120, 40, base, Options{})
	over := base.Issues[0] // GPU0 held beyond its capacity
	if over.Code != model.IssueOverCapacity {
		t.Fatalf("the fixture's first issue is %s", over.Code)
	}
	seq := base.Seq
	with := func(issues ...model.Issue) {
		s := *base
		seq++
		s.Seq, s.Issues = seq, issues
		a.adopt(&s)
	}
	with()
	with(over)
	if !strings.HasPrefix(a.Flash.Text, "new issue: ") {
		t.Fatalf("no new-issue flash: %q", a.Flash.Text)
	}
	with()
	if !strings.HasPrefix(a.Flash.Text, "new issue, since cleared: ") || !strings.Contains(a.Flash.Text, "1.10 of 1.00") {
		t.Errorf("the issue cleared; flash %q", a.Flash.Text)
	}
	if a.Flash.Short != "" && !strings.HasPrefix(a.Flash.Short, "new issue, since cleared: ") {
		t.Errorf("short flash %q", a.Flash.Short)
	}
	// Back again: news again.
	with(over)
	if !strings.HasPrefix(a.Flash.Text, "new issue: ") {
		t.Errorf("the issue is back; flash %q", a.Flash.Text)
	}
}
