package console

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestHeaderPiecesReuseTheirMemory: each of serve's sessions lays its
// panes out for each snapshot, which makes the header's pieces; they are
// made into the memory of the last ones (half the header's allocations:
// 19 a header, 9 now), and the header drawn from them still follows the
// snapshot (the memo keeps copies, not the scratch they are made in).
func TestHeaderPiecesReuseTheirMemory(t *testing.T) {
	s := fake.Node(fake.Options{})
	a := testApp(t, 160, 48, s, Options{ReadOnly: true})
	first := a.headerPieces()
	span0 := &first[0].spans[0]
	again := a.headerPieces()
	if &again[0] != &first[0] || &again[0].spans[0] != span0 {
		t.Error("the header's pieces and spans were made in new memory, not the last header's")
	}
	// Snapshots of one kernel fewer each: the header says each count.
	for k := s.NumKernels(); k >= s.NumKernels()-3; k-- {
		next := *s
		next.Time = s.Time.Add(time.Duration(s.NumKernels()-k+1) * time.Second)
		next.SetKernels(s.Kernels()[s.NumKernels()-k:])
		feed(a, &next)
		if got := ansi.Strip(strings.Join(a.viewHeader(160), "\n")); !strings.Contains(got, " "+kit.Plural(k, "kernel")) {
			t.Fatalf("with %d kernels the header says:\n%s", k, got)
		}
	}
}

// TestHeaderSaysTheSummarysKernels: a node opened from a Prometheus fleet
// holds one row per agent (kernels are not series); its header counts
// the node's kernels, not those rows.
func TestHeaderSaysTheSummarysKernels(t *testing.T) {
	s := fake.Node(fake.Options{})
	rows := s.NumKernels()
	n := rows + 40
	s.SummaryKernels = &n
	a := testApp(t, 160, 48, s, Options{ReadOnly: true})
	got := ansi.Strip(strings.Join(a.viewHeader(160), "\n"))
	if !strings.Contains(got, " "+kit.Plural(n, "kernel")) || strings.Contains(got, " "+kit.Plural(rows, "kernel")) {
		t.Fatalf("a summary of %d kernels in %d rows; the header says:\n%s", n, rows, got)
	}
}

// TestHeaderSaysConfigErrorsBeforeTheSource: at 80 columns the second
// line leads with what makes every number wrong (an agent.toml the agent
// will not start with) before the device source's state; the NVML note
// of a node without GPUs pushed it off the line (the tour).
func TestHeaderSaysConfigErrorsBeforeTheSource(t *testing.T) {
	s := fake.Node(fake.Options{})
	s.Source = model.SourceInfo{Kind: "none", Health: "unavailable", Detail: "no GPU source: NVML library not found; host CPU and memory only"}
	s.Issues = append(s.Issues, model.Issue{Severity: model.SevError, Code: model.IssueConfig, Message: `cpu: "fifteen" is not a number`})
	a := testApp(t, 80, 24, s, Options{ReadOnly: true})
	got := ansi.Strip(strings.Join(a.viewHeader(80), "\n"))
	if !strings.Contains(got, "agent.toml has 1 error(s)") {
		t.Fatalf("at 80 columns the header hides the config's errors:\n%s", got)
	}
}

// TestHeaderSaysAMissingRootWhole: at 80 columns the second line says what
// a missing scratch root costs, uncut; its message, path and all, was cut
// "… of agent i-demo-numa1 is mis…". Where it fits, the message stands.
func TestHeaderSaysAMissingRootWhole(t *testing.T) {
	for _, w := range []int{80, 200} {
		s := fake.Node(fake.Options{})
		s.Issues = append(s.Issues, model.Issue{Severity: model.SevError, Code: model.IssueRootMissing, Agent: "i-demo-numa1",
			File:    "/var/lib/backend.ai/scratches/i-demo-numa1",
			Message: "scratch root /var/lib/backend.ai/scratches/i-demo-numa1 of agent i-demo-numa1 is missing; waiting for it to come back"})
		a := testApp(t, w, 24, s, Options{ReadOnly: true})
		got := ansi.Strip(strings.Join(a.viewHeader(w), "\n"))
		want := "agent i-demo-numa1's kernels are not counted: its scratch root is missing"
		if w == 200 {
			want = "is missing; waiting for it to come back"
		}
		if !strings.Contains(got, want) {
			t.Errorf("at %d columns the header does not say %q:\n%s", w, want, got)
		}
	}
}

// TestHeaderSaysAnUnusableConfigWhole: at 80 columns an agent.toml changed
// on disk into one that cannot be used is said with what fgtop does about
// it; the message, led by the loader's error, was cut before "still
// showing the partition last read".
func TestHeaderSaysAnUnusableConfigWhole(t *testing.T) {
	s := fake.Node(fake.Options{})
	s.Issues = append(s.Issues, model.Issue{Severity: model.SevError, Code: model.IssueConfig, File: "/etc/backend.ai/agent.toml",
		Message: "agent.toml changed on disk and cannot be used (/etc/backend.ai/agent.toml:77:7: not valid TOML: array is incomplete; Backend.AI's agent cannot load it either: fix line 77); still showing the partition last read"})
	a := testApp(t, 80, 24, s, Options{ReadOnly: true})
	got := ansi.Strip(strings.Join(a.viewHeader(80), "\n"))
	if want := "agent.toml on disk cannot be used: showing the partition last read"; !strings.Contains(got, want) {
		t.Errorf("at 80 columns the header does not say %q:\n%s", want, got)
	}
}

// TestHeaderSaysAGoneConfigIsGone: agent.toml removed (or made unreadable)
// under a running console was counted as a file with errors, and the
// header said "agent.toml has 1 error(s): the agent will not start with
// it" of a file that is not there. It now says the file is gone (or
// cannot be read) and that the partition shown is the last read.
func TestHeaderSaysAGoneConfigIsGone(t *testing.T) {
	const path = "/etc/backend.ai/agent.toml"
	for _, c := range []struct{ msg, short string }{
		{"agent.toml " + path + " is gone (removed or renamed, or its directory): still showing the partition last read; put it back, or start fgtop with --config naming where it is now",
			"agent.toml is gone: showing the partition last read"},
		{"agent.toml " + path + " can no longer be read (permission denied): still showing the partition last read; give fgtop's user read access again, or run fgtop as root or as the user the agent runs as",
			"agent.toml cannot be read: showing the partition last read"},
	} {
		s := fake.Node(fake.Options{})
		s.Issues = append(s.Issues, model.Issue{Severity: model.SevError, Code: model.IssueConfig, File: path, Message: c.msg})
		for _, w := range []int{80, 300} {
			a := testApp(t, w, 24, s, Options{ReadOnly: true})
			got := ansi.Strip(strings.Join(a.viewHeader(w), "\n"))
			if strings.Contains(got, "will not start with it") {
				t.Errorf("at %d columns the header says the agent will not start with a file that is not there:\n%s", w, got)
			}
			want := c.short
			if w > 200 {
				want = c.msg
			}
			if !strings.Contains(got, want) {
				t.Errorf("at %d columns the header does not say %q:\n%s", w, want, got)
			}
		}
	}
}
