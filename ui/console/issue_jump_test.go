package console

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestEnterOnIssueJumps presses Enter on each of the demo node's issues:
// one that names a kernel selects it in the kernel list and opens its
// detail, one that names a device selects that device, and one that
// names neither opens its own detail and flashes why.
func TestEnterOnIssueJumps(t *testing.T) {
	base := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	if len(base.d.Issues) == 0 {
		t.Fatal("the fixture has no issues")
	}
	jumped := 0
	for i := range base.d.Issues {
		a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
		for a.focus != paneIssues {
			a.Update(keyCode(tea.KeyTab))
		}
		a.Issues.selectRow(i)
		is := a.d.Issues[i].Is
		a.Update(keyCode(tea.KeyEnter))
		if detailOf(a) == nil {
			t.Fatalf("issue %d (%s): no detail opened", i, is)
		}
		switch detailOf(a).Kind {
		case detKernel:
			jumped++
			if a.focus != paneKernels || detailOf(a).kern != is.Kernel || a.selectedID() != string(is.Kernel) {
				t.Errorf("issue %d: kernel detail %s, focus %d, selected %q; want %s", i, detailOf(a).kern, a.focus, a.selectedID(), is.Kernel)
			}
		case detDevice:
			jumped++
			if is.Kernel != "" && a.Kernels.indexOf(is.Kernel) >= 0 {
				t.Errorf("issue %d: went to the device though kernel %s is listed", i, is.Kernel)
			}
			if a.focus != paneDevices || detailOf(a).Dev != is.Device || a.d.Devs[a.devices.Cursor].Key != is.Device {
				t.Errorf("issue %d: device detail %v, focus %d; want %v", i, detailOf(a).Dev, a.focus, is.Device)
			}
		case detIssue:
			if is.Device.ID == "" && is.Kernel == "" && a.Flash.Text == "" {
				t.Errorf("issue %d (%s): names nothing, and no flash says so", i, is)
			}
			if is.Device.ID != "" && a.Flash.Text == "" {
				t.Errorf("issue %d (%s): did not jump to its device and said nothing", i, is)
			}
		}
	}
	if jumped == 0 {
		t.Error("no issue of the fixture jumped anywhere: the test proves nothing")
	}
}
