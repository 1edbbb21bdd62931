package plugin

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestScanEvidenceSkipsFIFO: a FIFO named resource.txt (no writer ever
// opens it) is not evidence and does not block the scan: a blocking open
// there hung snapshot, check and the console before their first frame.
// A symlinked resource.txt is skipped as the scanner skips it.
func TestScanEvidenceSkipsFIFO(t *testing.T) {
	root := t.TempDir()
	for _, k := range []string{"fifo", "link", "real"} {
		if err := os.MkdirAll(filepath.Join(root, k, "config"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo", "config", "resource.txt"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	real := filepath.Join(root, "real", "config", "resource.txt")
	if err := os.WriteFile(real, []byte("CUDA.SHARES_SHARES=GPU-a:0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(root, "link", "config", "resource.txt")); err != nil {
		t.Fatal(err)
	}
	done := make(chan Evidence, 1)
	go func() { done <- ScanEvidence([]string{root}) }()
	select {
	case e := <-done:
		if e.Files != 1 || e.Shares != 1 || e.SharesExample != real {
			t.Fatalf("evidence %+v, want the one regular file only", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ScanEvidence blocked on a FIFO named resource.txt")
	}
}
