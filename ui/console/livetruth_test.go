package console

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestSourceWarningsAndRestart: a missing scratch root and an unusable
// agent.toml are said under the header; an agent running an older
// agent.toml says "restart pending".
func TestSourceWarningsAndRestart(t *testing.T) {
	s := &model.Snapshot{
		Issues: []model.Issue{
			{Severity: model.SevError, Code: model.IssueRootMissing, Message: "scratch root /nope of agent a is missing; waiting for it to come back"},
			{Severity: model.SevError, Code: model.IssueConfig, Message: "agent.toml changed on disk and cannot be used (x); still showing the partition last read"},
			{Severity: model.SevError, Code: model.IssueConfig, Message: "some other config problem"},
		},
		Agents: []model.Agent{{ID: "a", Restart: model.Restart{State: model.RestartPending}}},
	}
	got := spansText(sourceWarnings(s, 200))
	for _, want := range []string{"/nope", "cannot be used"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "some other") {
		t.Errorf("warnings %q hold an ordinary config issue", got)
	}
	// A file the agent refuses is said under the header, counted, not
	// only in the issue list.
	if !strings.Contains(got, "agent.toml has 1 error(s): the agent will not start") {
		t.Errorf("warnings %q do not say the agent.toml has errors", got)
	}
	if r := restartPending(s); r.Text != "restart pending" {
		t.Errorf("restart span %+v", r)
	}
	s.Agents[0].Restart.State = model.RestartCurrent
	if r := restartPending(s); r.Text != "" {
		t.Errorf("restart span %+v for a current agent", r)
	}
}

// TestAllocMapLines: the device detail shows the current ratio as printed
// and exactly, and the absolute sum.
func TestAllocMapLines(t *testing.T) {
	key := model.DeviceKey{Name: "cuda", ID: "g"}
	u := &model.DeviceUsage{Key: key, Held: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.50")}}
	s := &model.Snapshot{
		Devices: []model.Device{{ID: "g", Name: "cuda", Slot: model.SlotCUDAShares, Capacity: model.MustDec("1.33")}},
		Usage:   map[model.DeviceKey]*model.DeviceUsage{key: u},
	}
	var lines []string
	for _, l := range allocMapLines(s, u, "g") {
		lines = append(lines, spansText(l.spans))
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{"0.3759", "exact 0.3759398496240601503759398496", "absolute (old)    0.50"} {
		if !strings.Contains(got, want) {
			t.Errorf("lines lack %q:\n%s", want, got)
		}
	}
}
