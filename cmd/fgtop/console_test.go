package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleThemeIsUsage: a --theme that cannot be loaded is a usage
// error (exit 2) in the flag's words, whichever command's console asks.
func TestConsoleThemeIsUsage(t *testing.T) {
	for _, theme := range []string{"no-such-theme", "./missing.toml"} {
		_, err := (&consoleFlags{theme: theme}).uiOptions("node")
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.HasPrefix(err.Error(), "--theme "+theme+": ") {
			t.Errorf("--theme %s: %v; want a usage error starting %q", theme, err, "--theme "+theme+": ")
		}
	}
	if o, err := (&consoleFlags{theme: "dark", readOnly: true}).uiOptions("node"); err != nil || o.Background != "dark" || !o.ReadOnly || o.Records == nil {
		t.Errorf("--theme dark --readonly: %+v, %v", o, err)
	}
}

// TestConsoleThemeBeforeNode: a --theme typo is said before the node is
// opened: it was hidden behind "no agent.toml found" (or any other
// trouble with the node), and said only once that was fixed.
func TestConsoleThemeBeforeNode(t *testing.T) {
	src := &sourceFlags{config: filepath.Join(t.TempDir(), "none.toml"), devices: "auto"}
	err := consoleOn(context.Background(), "fgtop", src, &consoleFlags{theme: "no-such-theme"})
	if err == nil || !strings.HasPrefix(err.Error(), "--theme no-such-theme: ") {
		t.Errorf("consoleOn = %v; want the --theme error first", err)
	}
}
