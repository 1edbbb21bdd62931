package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecorderDirIsAFile: a history directory that cannot be made because
// a file stands in its place (or in a parent's) is said in fgtop's words,
// naming the file, not as mkdir's "not a directory".
func TestRecorderDirIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "afile")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "sub")} {
		_, err := Open(Options{Dir: dir})
		if err == nil || !strings.Contains(err.Error(), file+" is a file, not a directory") || strings.Contains(err.Error(), "mkdir") {
			t.Errorf("--dir %s: %v, want it to name %s as a file", dir, err, file)
		}
	}
}
