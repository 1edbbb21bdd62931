package history

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestOrphanFoldDropped: a fold whose segment is gone (retention dropped
// both between a fold writer's rename and its check) is removed by the
// next retention; a fold beside its segment, and a file named like a fold
// that is not a regular file, stay.
func TestOrphanFoldDropped(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	name := func(at time.Time) string { return segName(at)[:len(segName(at))-len(segSuffix)] }
	orphan := filepath.Join(dir, name(now.Add(-3*time.Hour))+foldSuffix)
	kept := filepath.Join(dir, name(now.Add(-2*time.Hour))+foldSuffix)
	odd := filepath.Join(dir, name(now.Add(-time.Hour))+foldSuffix)
	for _, f := range []string{orphan, kept} {
		if err := os.WriteFile(f, []byte("a fold"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, name(now.Add(-2*time.Hour))+segSuffix), []byte("its segment"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(odd, 0o700); err != nil {
		t.Fatal(err)
	}
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return now }, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	rec.retain(now)
	rec.Close()
	if _, err := os.Lstat(orphan); !os.IsNotExist(err) {
		t.Errorf("the orphan fold stayed: %v", err)
	}
	for _, f := range []string{kept, odd} {
		if _, err := os.Lstat(f); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}
