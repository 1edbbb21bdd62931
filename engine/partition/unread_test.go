package partition

import (
	"slices"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestUnreadKernels: what plan, apply and rollback count as a kernel
// whose holding is not known. A one-shot read counts every file that
// does not parse, torn ones too, and one cut short after SLOTS; the live
// console's stale kernel, kept at its last good allocation while its
// file is being written (a warning), is known by that, but not one whose
// file is wrong (an error).
func TestUnreadKernels(t *testing.T) {
	ids := []model.KernelID{
		"11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333",
		"44444444-4444-4444-8444-444444444444", "55555555-5555-4555-8555-555555555555", "66666666-6666-4666-8666-666666666666",
	}
	snap := &model.Snapshot{}
	snap.SetKernels([]*model.Kernel{
		{ID: ids[0], State: model.KernelBroken}, {ID: ids[1], State: model.KernelOK}, {ID: ids[2], State: model.KernelStale},
		{ID: ids[3], State: model.KernelStale}, {ID: ids[4], State: model.KernelStale}, {ID: ids[5], State: model.KernelOK},
	})
	snap.Issues = []model.Issue{
		{Severity: model.SevWarning, Code: model.IssueParse, Kernel: ids[0], File: "torn, one-shot", Message: "m"},
		{Severity: model.SevWarning, Code: model.IssueNoAllocation, Kernel: ids[1], File: "cut after SLOTS, one-shot", Message: "m"},
		{Severity: model.SevWarning, Code: model.IssueParse, Kernel: ids[2], File: "torn, stale", Message: "m"},
		{Severity: model.SevWarning, Code: model.IssueNoAllocation, Kernel: ids[3], File: "cut after SLOTS, stale", Message: "m"},
		{Severity: model.SevError, Code: model.IssueParse, Kernel: ids[4], File: "garbage, stale", Message: "m"},
		{Severity: model.SevWarning, Code: model.IssueNoFinalNewline, Kernel: ids[5], File: "no final newline, read whole", Message: "m"},
		{Severity: model.SevError, Code: model.IssuePermission, File: "a scratch dir unreadable", Message: "m"},
	}
	got := unreadKernels(snap)
	want := []string{"torn, one-shot: m", "cut after SLOTS, one-shot: m", "garbage, stale: m", "a scratch dir unreadable: m"}
	if !slices.Equal(got, want) {
		t.Errorf("unread %q\nwant %q", got, want)
	}
}
