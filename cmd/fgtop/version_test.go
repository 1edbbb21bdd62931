package main

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/fgtop/fgtop/internal/buildinfo"
)

// TestVersionCommands runs the three spellings and checks they agree with
// each other and with the running binary.
func TestVersionCommands(t *testing.T) {
	code, long := runCLI(t, "--version")
	wantCode(t, code, exitOK, long, "fgtop ", "go:      "+runtime.Version())
	code, cmd := runCLI(t, "version")
	wantCode(t, code, exitOK, cmd)
	if long != cmd {
		t.Errorf("fgtop --version and fgtop version differ:\n%s\n---\n%s", long, cmd)
	}
	code, js := runCLI(t, "version", "--json")
	wantCode(t, code, exitOK, js)
	var doc buildinfo.Info
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("version --json: %v\n%s", err, js)
	}
	if doc.Go != runtime.Version() || doc.Module == "" || doc.Version == "" {
		t.Errorf("version --json = %+v", doc)
	}
	if doc.Text() != cmd {
		t.Errorf("the JSON and the text disagree:\n%s\n---\n%s", doc.Text(), cmd)
	}
	code, out := runCLI(t, "version", "extra")
	wantCode(t, code, exitBadUsage, out)
}
