package demo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/scratch"
)

// TestDirOf: a path under a directory holding the marker is the demo's,
// through a symbolic link too; one beside it, or under a marker that is
// not a file, is not.
func TestDirOf(t *testing.T) {
	base := t.TempDir()
	node := filepath.Join(base, "fgtop-demo-1")
	root := filepath.Join(node, "scratches", "i-demo-numa0")
	other := filepath.Join(base, "real", "scratch")
	for _, d := range []string{root, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeMarker(node); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(base, "real", Marker), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{[]string{root}, node},
		{[]string{link}, node},
		{[]string{"", other, filepath.Join(node, "agent.toml"), root}, node},
		{[]string{other}, ""},
		{[]string{filepath.Join(base, "missing")}, ""},
	} {
		if got := DirOf(c.paths...); got != c.want {
			t.Errorf("DirOf(%q) = %q, want %q", c.paths, got, c.want)
		}
	}
	if got := FilesOf(engine.Options{ConfigPath: filepath.Join(base, "copy.toml"), Roots: []scratch.Root{{Path: root}}}); got != node {
		t.Errorf("FilesOf(a copied agent.toml naming the demo's roots) = %q, want %q", got, node)
	}
}
