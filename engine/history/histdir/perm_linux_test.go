package histdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/internal/testfix"
)

// TestUnreadableRecord: a record another user may not read (its
// directory, or a segment, mode 0700/0600 and root's) is said in fgtop's
// words, naming what to run fgtop as, where Go's "history DIR: open DIR:
// permission denied" (and "segment seg-…: open DIR/seg-…: permission
// denied") said neither. Real permission bits: run as root, where they
// stop nothing, it re-runs itself as user nobody (65534), and is skipped
// where that is not possible.
func TestUnreadableRecord(t *testing.T) {
	if testfix.ReexecAsNobody(t) {
		return
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if _, err := os.ReadDir(dir); err == nil {
		t.Skip("permission bits do not stop this user")
	}
	_, err := ForReading(dir, "")
	if err == nil || !strings.Contains(err.Error(), "this user may not read the directory") || !strings.Contains(err.Error(), "run fgtop as the recorder's user, or as root") {
		t.Errorf("ForReading of a directory this user may not read: %v; want it said, and what to run fgtop as", err)
	}
	// The console's :at opens the reader without ForReading.
	_, err = history.OpenReader(dir)
	if err == nil || !strings.Contains(err.Error(), "this user may not read the directory") || strings.Contains(err.Error(), "open "+dir) {
		t.Errorf("OpenReader of a directory this user may not read: %v; want it said in fgtop's words", err)
	}

	// A readable directory whose segment this user may not read.
	dir = t.TempDir()
	seg := filepath.Join(dir, fmt.Sprintf("seg-%020d.fgh", time.Now().Add(-time.Hour).UnixNano()))
	if err := os.WriteFile(seg, []byte(strings.Repeat("x", 64)), 0); err != nil {
		t.Fatal(err)
	}
	rd, err := history.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rd.At(time.Now().Add(-time.Minute))
	if err == nil || !strings.Contains(err.Error(), "this user may not read it") || strings.Contains(err.Error(), "open "+seg) {
		t.Errorf("a segment this user may not read: %v; want it said in fgtop's words", err)
	}
}
