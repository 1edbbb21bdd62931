package console

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

// faultConsole renders one snapshot the live engine published during a
// fault scenario, as an operator would see it.
type faultConsole struct {
	t *testing.T
	A *App
}

func newFaultConsole(t *testing.T, s *model.Snapshot) *faultConsole {
	return &faultConsole{t: t, A: testApp(t, 200, 50, s, Options{})}
}

func (c *faultConsole) frame() string { return ansi.Strip(c.A.View().Content) }

// allKernels switches the kernel list to every kernel and returns the
// frame.
func (c *faultConsole) allKernels() string {
	if c.A.Kernels.follow {
		typeKeys(c.A, "f")
	}
	return c.frame()
}

// kernelRow returns the kernel list's row of the kernel (by its short id),
// or "".
func (c *faultConsole) kernelRow(id model.KernelID) string {
	for _, line := range strings.Split(c.allKernels(), "\n") {
		if strings.Contains(line, string(id)[:8]+" ") {
			return line
		}
	}
	return ""
}

// issueDetail selects the issue with the code (and file or device, where
// given) in the Issues pane, opens its detail, and returns that frame.
func (c *faultConsole) issueDetail(code, file string, dev model.DeviceKey) string {
	c.t.Helper()
	idx := -1
	for i, r := range c.A.d.Issues {
		if r.Is.Code == code && (file == "" || r.Is.File == file) && (dev.ID == "" || r.Is.Device == dev) {
			idx = i
			break
		}
	}
	if idx < 0 {
		c.t.Fatalf("the console lists no %s issue for %q %v; frame:\n%s", code, file, dev, c.frame())
	}
	for c.A.focus != paneIssues {
		c.A.Update(keyCode(tea.KeyTab))
	}
	typeKeys(c.A, "g")
	for range idx {
		typeKeys(c.A, "j")
	}
	c.A.Update(keyCode(tea.KeyEnter))
	f := c.frame()
	c.A.Update(keyCode(tea.KeyEscape))
	return f
}

func mustContain(t *testing.T, what, frame string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(frame, w) {
			t.Errorf("%s: %q not shown; frame:\n%s", what, w, frame)
		}
	}
}

func mustNotContain(t *testing.T, what, frame string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(frame, b) {
			t.Errorf("%s: %q shown; frame:\n%s", what, b, frame)
		}
	}
}

// TestFaultsRendered runs each fault scenario against the live engine on
// real files (enginetest.Scenarios, the same ones engine's TestFaults
// checks the account of) and checks what the console shows for the
// snapshots the engine published: the fault visible and named, the
// figures right, and the issue gone once the fault is.
func TestFaultsRendered(t *testing.T) {
	scenarios := append(enginetest.Scenarios(), enginetest.NVMLScenarios()...)
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			if sc.AsNobody && testfix.ReexecAsNobody(t) {
				return
			}
			phases := sc.Run(t)
			for _, ph := range phases {
				check, ok := renderedChecks[sc.Name+"/"+ph.Name]
				if !ok {
					t.Fatalf("no console check for phase %s/%s", sc.Name, ph.Name)
				}
				check(t, newFaultConsole(t, ph.Snap), ph)
			}
		})
	}
}

type renderedCheck func(t *testing.T, c *faultConsole, ph enginetest.Phase)

// kernelsHeader is the header's kernel count.
func kernelsHeader(s *model.Snapshot) string { return kernelCount(s.NumKernels()) }

func kernelCount(n int) string {
	if n == 1 {
		return "│ 1 kernel │"
	}
	return fmt.Sprintf("│ %d kernels", n)
}

// renderedChecks are the console checks per scenario/phase.
var renderedChecks = map[string]renderedCheck{
	"root-removed-and-recreated/before": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		f := c.allKernels()
		mustContain(t, "before", f, kernelsHeader(ph.Snap), "00000001", "00000002", "00000003")
		mustNotContain(t, "before", f, "ERR scratch-root-missing")
	},
	"root-removed-and-recreated/root-missing": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		f := c.allKernels()
		mustContain(t, "root missing", f, kernelCount(1), "ERR scratch-root-missing", "00000003")
		mustNotContain(t, "root missing: its kernels are gone", f, "00000001 ", "00000002 ")
		d := c.issueDetail(model.IssueRootMissing, ph.Root, model.DeviceKey{})
		mustContain(t, "root-missing detail", d, ph.Root, "is missing", "agent-a")
	},
	"root-removed-and-recreated/root-back": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		f := c.allKernels()
		mustContain(t, "root back", f, kernelsHeader(ph.Snap), "00000001", "00000004", "00000003")
		mustNotContain(t, "root back", f, "ERR scratch-root-missing", "00000002 ")
	},
	"kernel-dir-symlinked-outside/before": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		mustContain(t, "before", c.allKernels(), "00000001", "00000002")
	},
	"kernel-dir-symlinked-outside/symlinked": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		f := c.allKernels()
		mustContain(t, "symlinked", f, "ERR symlink-escape", kernelCount(1))
		mustNotContain(t, "symlinked: never followed", f, "00000001 ", "00000bad", "0.90", "0.95")
		d := c.issueDetail(model.IssueSymlinkEscape, ph.Path, model.DeviceKey{})
		mustContain(t, "symlink detail", d, ph.Path, "outside the scratch root", "not followed", string(ph.Kernel))
	},
	"kernel-dir-symlinked-outside/fixed": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		f := c.allKernels()
		mustContain(t, "fixed", f, "00000001", kernelCount(2))
		mustNotContain(t, "fixed", f, "ERR symlink-escape")
	},
	"resource-100MB/before": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		mustContain(t, "before", c.kernelRow(enginetest.KernelIDOf(1)), " ok")
	},
	"resource-100MB/huge": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		mustContain(t, "huge file: kernel row", c.kernelRow(ph.Kernel), "stale", "0.40")
		mustContain(t, "huge file", c.frame(), "(1 unreadable)")
		d := c.issueDetail(model.IssueParse, ph.Path, model.DeviceKey{})
		mustContain(t, "huge file detail", d, ph.Path, "too large", "last good")
	},
	"resource-100MB/fixed": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		mustContain(t, "fixed", c.kernelRow(ph.Kernel), " ok", "0.45")
		mustNotContain(t, "fixed", c.frame(), "ERR parse-error", "unreadable")
	},
	"resource-nul-bytes/before": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		mustContain(t, "before", c.kernelRow(enginetest.KernelIDOf(1)), " ok", "0.30")
	},
	"resource-nul-bytes/nul": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		mustContain(t, "NUL: kernel row", c.kernelRow(ph.Kernel), "stale", "0.30")
		mustContain(t, "NUL", c.frame(), "ERR parse-error")
		d := c.issueDetail(model.IssueParse, ph.Path, model.DeviceKey{})
		mustContain(t, "NUL detail", d, ph.Path+":", `\x00`, "last good")
	},
	"resource-nul-bytes/nul-only": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		mustContain(t, "NUL-only: kernel row", c.kernelRow(ph.Kernel), "broken")
		d := c.issueDetail(model.IssueParse, ph.Path, model.DeviceKey{})
		mustContain(t, "NUL-only detail", d, ph.Path)
	},
	"resource-nul-bytes/fixed": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		f := c.allKernels()
		mustContain(t, "fixed", f, kernelCount(2))
		mustNotContain(t, "fixed", f, "ERR parse-error", " stale", " broken")
	},
	"permission-denied/before": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		mustNotContain(t, "before", c.frame(), "ERR permission-denied")
	},
	"permission-denied/denied-file": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		mustContain(t, "denied file: kernel keeps its figures, stale", c.kernelRow(ph.Kernel), "0.30", "stale")
		mustContain(t, "denied", c.frame(), "ERR permission-denied")
		d := c.issueDetail(model.IssuePermission, ph.Path, model.DeviceKey{})
		mustContain(t, "denied file detail", d, ph.Path, "permission denied", "last good allocation")
	},
	"permission-denied/denied-dir": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		mustContain(t, "denied dir: kernel listed, stale", c.kernelRow(ph.Kernel), "stale")
		d := c.issueDetail(model.IssuePermission, ph.Path, model.DeviceKey{})
		mustContain(t, "denied dir detail", d, ph.Path, "permission denied")
	},
	"permission-denied/fixed": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		mustContain(t, "fixed", c.kernelRow(enginetest.KernelIDOf(1)), "0.35", " ok")
		mustNotContain(t, "fixed", c.frame(), "ERR permission-denied")
		mustNotContain(t, "fixed: watches set again", c.frame(), "WRN watch")
	},
	"nvml-gpu-lost/healthy": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		f := c.frame()
		mustContain(t, "healthy", deviceRow(f, "GPU3"), "40%", "43°C", "130W")
		mustNotContain(t, "healthy", f, "LOST")
	},
	"nvml-gpu-lost/lost": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		f := c.frame()
		mustContain(t, "lost GPU row", deviceRow(f, "GPU3"), "LOST", "0.50/1")
		mustNotContain(t, "lost GPU row shows no readings", deviceRow(f, "GPU3"), "40%", "43°C")
		for i, want := range []string{"10%", "20%", "30%", "", "50%", "60%", "70%", "80%"} {
			if want != "" {
				mustContain(t, fmt.Sprintf("GPU%d keeps its telemetry", i), deviceRow(f, fmt.Sprintf("GPU%d", i)), want)
			}
		}
		mustContain(t, "lost", f, "NVML degraded", "ERR device-source")
		d := c.issueDetail(model.IssueDeviceSource, "", ph.Device)
		mustContain(t, "lost detail", d, "ERROR_GPU_IS_LOST", string(ph.Device.ID), "GPU3")
	},
	"nvml-gpu-lost/after": func(t *testing.T, c *faultConsole, ph enginetest.Phase) {
		f := c.frame()
		mustContain(t, "after: the lost GPU's account goes on", deviceRow(f, "GPU3"), "LOST", "0.75/1")
		mustContain(t, "after", deviceRow(f, "GPU5"), "0.40/1", "60%")
	},
}

// deviceRow returns the devices pane's row of the device labelled label.
func deviceRow(frame, label string) string {
	for _, line := range strings.Split(frame, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, "▶ "), label+" ") {
			return line
		}
	}
	return ""
}
