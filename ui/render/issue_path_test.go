package render

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestIssueKernelIDInPath: an issue row shortens its kernel's id as the
// kernels pane does, but inside a path the cut is marked: a bare prefix
// there read as a path that does not exist. The WHERE column keeps the
// whole path.
func TestIssueKernelIDInPath(t *testing.T) {
	const id = "11111111-1111-4111-8111-111111111111"
	path := "/var/scratch/" + id + "/config/resource.txt"
	s := &model.Snapshot{Issues: []model.Issue{{Severity: model.SevError, Code: model.IssueParse, File: path, Kernel: id,
		Message: "read " + path + ": not a regular file (kernel " + id + ")"}}}
	for _, g := range []kit.Glyphs{kit.UnicodeGlyphs(false), kit.ASCIIGlyphs()} {
		d := Derive(s, DeriveOptions{Th: kit.DefaultThresholds(), G: g}, nil)
		if len(d.Issues) != 1 {
			t.Fatalf("%d issue rows", len(d.Issues))
		}
		r := d.Issues[0]
		want := "read /var/scratch/11111111" + g.Ellipsis + "/config/resource.txt: not a regular file (kernel 11111111)"
		if !strings.HasSuffix(r.Text, want) || strings.Contains(r.Text, "/11111111/") || r.Where != path {
			t.Errorf("row %q (where %q), want it to end %q and where the whole path", r.Text, r.Where, want)
		}
	}
}

// TestIssueKernelIDTellsApart: where two listed kernels share their first
// 8 characters, an issue names its kernel as the kernels pane does, long
// enough to tell the two apart, and so do the device's holdings
// (ShortID).
func TestIssueKernelIDTellsApart(t *testing.T) {
	const a, b = "abcdef12-3456-4111-8111-111111111111", "abcdef12-3457-4222-8222-222222222222"
	s := &model.Snapshot{Issues: []model.Issue{{Severity: model.SevWarning, Code: model.IssueParse, Kernel: b,
		Message: "kernel " + b + " lists an unknown line"}}}
	s.SetKernels([]*model.Kernel{{ID: a, State: model.KernelOK}, {ID: b, State: model.KernelOK}})
	d := Derive(s, DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	if got := d.ShortID(b); got != "abcdef12-3457" {
		t.Fatalf("ShortID(%s) = %q, want the pane's abcdef12-3457", b, got)
	}
	if got := d.ShortID(a); got != "abcdef12-3456" {
		t.Fatalf("ShortID(%s) = %q", a, got)
	}
	if len(d.Issues) != 1 || !strings.HasSuffix(d.Issues[0].Text, "kernel abcdef12-3457 lists an unknown line") {
		t.Fatalf("issue rows %+v", d.Issues)
	}
	if got := d.ShortID("99999999-0000-4000-8000-000000000000"); got != "99999999" {
		t.Errorf("a kernel not listed: %q", got)
	}
}

// TestIssueKernelIDWholeIsNotMarked: where the pane's id is the whole id
// (two ids alike but for their last character), a path keeps it whole,
// with no mark of a cut that was not made.
func TestIssueKernelIDWholeIsNotMarked(t *testing.T) {
	const a, b = "abcdef12-3456-4111-8111-111111111111", "abcdef12-3456-4111-8111-111111111112"
	path := "/s/" + b + "/config/resource.txt"
	s := &model.Snapshot{Issues: []model.Issue{{Severity: model.SevError, Code: model.IssueParse, File: path, Kernel: b,
		Message: "read " + path + ": not a regular file"}}}
	s.SetKernels([]*model.Kernel{{ID: a, State: model.KernelOK}, {ID: b, State: model.KernelOK}})
	d := Derive(s, DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	if len(d.Issues) != 1 || !strings.HasSuffix(d.Issues[0].Text, "read "+path+": not a regular file") {
		t.Fatalf("issue rows %+v", d.Issues)
	}
}
