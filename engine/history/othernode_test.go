package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestOpenRefusesAnotherNodesRecord: a recorder given the names its node
// goes by refuses a directory whose record last named another node (a
// copy of node-a's record browsed on node-b, the demo pointed at the real
// record), and drops none of its segments on the way, whatever --keep
// says. A record of one of its names, or of no name, is taken.
func TestOpenRefusesAnotherNodesRecord(t *testing.T) {
	t0 := time.Now().Add(-3 * time.Hour).Truncate(time.Second)
	record := func(t *testing.T, node string) string {
		dir := filepath.Join(t.TempDir(), "history")
		now := t0
		rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			now = t0.Add(time.Duration(i) * time.Minute)
			rec.Observe(&model.Snapshot{Seq: uint64(i + 1), Time: now, Node: node})
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	files := func(t *testing.T, dir string) string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && e.Name() != lockName {
				b.WriteString(e.Name() + " " + fi.ModTime().String() + "\n")
			}
		}
		return b.String()
	}
	for _, c := range []struct {
		name     string
		recorded string
		names    []string
		refused  bool
	}{
		{"another node", "node-a", []string{"node-b"}, true},
		{"the demo into a real record", "gpu7", []string{"fgtop-demo"}, true},
		{"its own name", "node-a", []string{"node-a"}, false},
		{"one of its names (serve --node beside record)", "node-a.example", []string{"a7", "node-a.example"}, false},
		{"no names given: no check", "node-a", nil, false},
		{"a record of no name", "", []string{"node-b"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := record(t, c.recorded)
			before := files(t, dir)
			// Retention would drop everything: the record is hours old.
			rec, err := Open(Options{Dir: dir, Names: c.names, Keep: time.Minute})
			if !c.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				rec.Close()
				return
			}
			if err == nil {
				rec.Close()
				t.Fatal("recorded into another node's record")
			}
			var oe *OtherNodeError
			if !errors.Is(err, ErrOtherNode) || !errors.As(err, &oe) || oe.Node != c.recorded {
				t.Fatalf("error %v (%T), want ErrOtherNode naming %s", err, err, c.recorded)
			}
			for _, want := range []string{dir, `"` + c.recorded + `"`, `"` + c.names[0] + `"`, "--history"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %s", err, want)
				}
			}
			if after := files(t, dir); after != before {
				t.Errorf("the refused record changed:\n%s\nnow:\n%s", before, after)
			}
			// The lock is given back: the node's own recorder still records.
			rec, err = Open(Options{Dir: dir, Names: []string{c.recorded}})
			if err != nil {
				t.Fatalf("after the refusal: %v", err)
			}
			rec.Close()
		})
	}
}

// TestOpenTakesItsOwnRecordUnderAnotherName: a record last named
// otherwise whose last moment lists a kernel running on this host (its
// resource.txt is here, under one of this node's scratch roots) is this
// host's under another name (serve --node, a renamed host): a recorder
// that may take the kernels' word takes it, and says so; the demo's (no
// vouching), a copy of another node's record (its kernels' files are not
// here) and a copy of a record whose kernels' files are here but outside
// this node's roots (the demo's, running beside) are refused.
func TestOpenTakesItsOwnRecordUnderAnotherName(t *testing.T) {
	top := t.TempDir()
	scratch := filepath.Join(top, "scratches")
	here := filepath.Join(scratch, "0a0a0a0a-1111-4111-8111-111111111111", "config", "resource.txt")
	if err := os.MkdirAll(filepath.Dir(here), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(here, []byte("SLOTS={}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(scratch, "0b0b0b0b-2222-4222-8222-222222222222", "config", "resource.txt")
	record := func(t *testing.T, path string) string {
		dir := filepath.Join(t.TempDir(), "history")
		t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
		rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		s := &model.Snapshot{Seq: 1, Time: t0, Node: "gpu3"}
		s.SetKernels([]*model.Kernel{{ID: model.KernelID(filepath.Base(filepath.Dir(filepath.Dir(path)))), Path: path, State: model.KernelOK}})
		rec.Observe(s)
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, c := range []struct {
		name    string
		path    string
		vouch   bool
		roots   []string
		refused bool
	}{
		{"its kernel runs here", here, true, []string{scratch}, false},
		{"its kernel runs here, under the second root", here, true, []string{filepath.Join(top, "other"), scratch}, false},
		{"its kernel runs here, the root unclean", here, true, []string{scratch + "/../scratches/"}, false},
		{"its kernel runs here, no vouching (the demo)", here, false, []string{scratch}, true},
		{"its kernel is not here (a copy)", gone, true, []string{scratch}, true},
		{"its kernel's file is here outside the roots (a copy of the demo's record)", here, true, []string{filepath.Join(top, "other")}, true},
		{"a root that is the kernel root's prefix string", here, true, []string{filepath.Join(top, "scratch")}, true},
		{"a root that is the kernel directory's prefix string", here, true, []string{filepath.Join(scratch, "0a0a0a0a")}, true},
		{"no roots", here, true, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := record(t, c.path)
			var said strings.Builder
			rec, err := Open(Options{Dir: dir, Names: []string{"node-a.example"}, KernelsVouch: c.vouch, Roots: c.roots,
				Logf: func(format string, a ...any) { said.WriteString(fmt.Sprintf(format, a...)) }})
			if err == nil {
				rec.Close()
			}
			if refused := errors.Is(err, ErrOtherNode); refused != c.refused {
				t.Fatalf("refused %v (%v), want %v", refused, err, c.refused)
			}
			if !c.refused && !strings.Contains(said.String(), `was last recorded as node "gpu3"; its kernel 0a0a0a0a-1111-4111-8111-111111111111 runs on this host`) {
				t.Errorf("taken without a word: %q", said.String())
			}
		})
	}
}
