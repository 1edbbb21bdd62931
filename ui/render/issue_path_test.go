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
