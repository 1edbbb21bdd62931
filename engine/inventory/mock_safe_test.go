//go:build unix

package inventory

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/internal/safefile"
)

// TestMockFilesAreRegularFilesOnly: a mock device or settings path naming
// a device or a FIFO fails at once instead of filling memory or hanging.
func TestMockFilesAreRegularFilesOnly(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/zero", fifo} {
		for name, load := range map[string]func(string) error{
			"config":   func(p string) error { _, err := LoadMockConfig(p); return err },
			"settings": func(p string) error { _, err := LoadMockSettings(p); return err },
		} {
			done := make(chan error, 1)
			go func() { done <- load(path) }()
			select {
			case err := <-done:
				if !errors.Is(err, safefile.ErrNotRegular) {
					t.Errorf("%s %s: %v", name, path, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s %s hangs", name, path)
			}
		}
	}
}
