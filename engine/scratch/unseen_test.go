package scratch

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUnseenRoots(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	file := filepath.Join(dir, "file")
	if err := os.Mkdir(ok, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	under := filepath.Join(file, "x") // ENOTDIR: stat fails, not as "does not exist"
	roots := []Root{{Path: ok, Agent: "a"}, {Path: missing, Agent: "b"}, {Path: file, Agent: "c"}, {Path: under, Agent: "d"}}
	for _, named := range []bool{false, true} {
		got := UnseenRoots(roots, named)
		want := []Unseen{
			{Root: roots[1], Message: "scratch root " + missing + " (agent b) does not exist", Blind: named},
			{Root: roots[2], Message: "scratch root " + file + " (agent c) is not a directory", Blind: true},
			{Root: roots[3], Message: "scratch root " + under + " (agent d): stat " + under + ": not a directory", Blind: true},
		}
		if len(got) != len(want) {
			t.Fatalf("named %v: %d unseen, want %d: %+v", named, len(got), len(want), got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("named %v: [%d] = %+v, want %+v", named, i, got[i], want[i])
			}
		}
	}
	if got := UnseenRoots(roots[:1], true); len(got) != 0 {
		t.Errorf("a readable directory is unseen: %+v", got)
	}
}
