package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

// TestHistoryAndSnapshotSayPlantedSegments: a FIFO and a file named for
// 2030 planted as segments are named by `history` and `snapshot --at`
// (an --at refused as outside the record too, which said nothing of them),
// and the 2030 one stretches no gap: before, the FIFO was skipped without
// a word and `history` listed "2030-01-01 to ..." backwards.
func TestHistoryAndSnapshotSayPlantedSegments(t *testing.T) {
	hist := t.TempDir()
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	now := at
	rec, err := history.Open(history.Options{Dir: hist, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s := &model.Snapshot{Seq: 1, Time: at, Node: "gpu-node01"}
	s.SetKernels([]*model.Kernel{{ID: "k1", Agent: "a", State: model.KernelOK,
		Alloc: model.Allocations{model.SlotCUDAShares: {"0": model.MustDec("0.5")}}}})
	rec.Observe(s)
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	now = at.Add(time.Second)
	rec.Close()
	segName := func(tm time.Time) string { return filepath.Join(hist, fmt.Sprintf("seg-%020d.fgh", tm.UnixNano())) }
	fifo := segName(at.Add(30 * time.Minute))
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	future := segName(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	if err := os.WriteFile(future, []byte("not a segment"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"history", "--kernel", "k1", "--history", hist}, 0},
		{[]string{"snapshot", "--at", at.Format(time.RFC3339), "--history", hist}, 0},
		// Refused as before the record: the planted files are said all
		// the same (they were not, while history said them).
		{[]string{"snapshot", "--at", at.Add(-time.Hour).Format(time.RFC3339), "--history", hist}, 1},
	} {
		args := c.args
		code, out := runCLI(t, args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d", args, code, c.code)
		}
		for _, want := range []string{fifo + ": a FIFO", future + ": named for 2030-01-01"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s does not say %q:\n%s", args[0], want, out)
			}
		}
		if strings.Contains(out, "missing: 2030") || strings.Contains(out, "to 2030") {
			t.Errorf("%s lists a gap to or from 2030:\n%s", args[0], out)
		}
	}
}

// TestHistoryEmptyRecordIsAFinding: `history` on a directory that holds
// no record yet says so and exits 1, as `snapshot --at` does; before, it
// blamed the name ("no device: the record knows no devices") with exit 2.
func TestHistoryEmptyRecordIsAFinding(t *testing.T) {
	hist := t.TempDir()
	for _, args := range [][]string{
		{"history", "--device", "GPU0", "--history", hist},
		{"history", "--kernel", "k1", "--history", hist},
		{"snapshot", "--at", "-1m", "--history", hist},
	} {
		code, out := runCLI(t, args...)
		if code != exitProblem {
			t.Errorf("%v: exit %d, want %d:\n%s", args, code, exitProblem, out)
		}
		if want := hist + ": the history directory holds no record yet"; !strings.Contains(out, want) {
			t.Errorf("%v does not say %q:\n%s", args, want, out)
		}
	}
}

// TestHistorySinceInTheFuture: a --since after now is said and exits 1
// whether or not a recorder holds the directory; with one (the record's
// end is now) it printed an empty table and exited 0, which read as
// "nobody held it" for a mistyped year (the tour).
func TestHistorySinceInTheFuture(t *testing.T) {
	dir := recordDemo(t, 20, 2*time.Second)
	for _, active := range []bool{false, true} {
		if active {
			rec, err := history.Open(history.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Close()
		}
		code, out := runCLI(t, "history", "--device", "GPU0", "--history", dir, "--since", "2099-01-01T00:00:00Z")
		if code != exitProblem || !strings.Contains(out, "is in the future") {
			t.Errorf("recorder holding the directory %v: exit %d, want %d saying the future:\n%s", active, code, exitProblem, out)
		}
	}
}

// TestSnapshotEmptyAt: an empty --at says so (it said "--history
// needs --at", with --at given: the tour).
func TestSnapshotEmptyAt(t *testing.T) {
	code, out := runCLI(t, "snapshot", "--history", t.TempDir(), "--at", "")
	if code != exitBadUsage || !strings.Contains(out, "--at is empty") {
		t.Errorf("exit %d, want %d saying --at is empty:\n%s", code, exitBadUsage, out)
	}
}

// TestSnapshotHistoryOff: --history off, as the console takes it, asks a
// snapshot of now for nothing: it is no error (it said "--history needs
// --at", tour helper-74); a directory without --at still is.
func TestSnapshotHistoryOff(t *testing.T) {
	mock := filepath.Join(testfix.Dir(t, "backendai"), "mock-accelerator.toml")
	root := t.TempDir()
	if code, out := runCLI(t, "snapshot", "--scratch-root", root, "--devices", mock, "--history", "off"); code != 0 {
		t.Errorf("--history off: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "snapshot", "--scratch-root", root, "--devices", mock, "--history", t.TempDir()); code != exitBadUsage || !strings.Contains(out, "--history needs --at") {
		t.Errorf("--history DIR without --at: exit %d:\n%s", code, out)
	}
}
