package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// TestServeDocSaysWhatRuns: docs/serve.md says what fgtop serve runs for
// a command, as the server does (the read-only snapshot stream that
// fleet.md's `ssh HOST snapshot` reads); it said commands are not run.
func TestServeDocSaysWhatRuns(t *testing.T) {
	mod, err := testfix.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(mod, "docs", "serve.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(raw)), " ")
	if strings.Contains(text, "commands are not run") {
		t.Error("docs/serve.md says commands are not run; the snapshot stream runs")
	}
	for _, want := range []string{"snapshot --json", "snapshot --follow --json", "fleet.md"} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/serve.md does not say %q", want)
		}
	}
}
