package main

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/ui/console"
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

// TestConsoleHistoryOffByEnv: the console is told that FGTOP_HISTORY=off,
// not a flag, turned its record off (its :at then names the variable);
// --history off, or a directory, is not that.
func TestConsoleHistoryOffByEnv(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		env, flag string
		dir       string
		off       bool
	}{
		{env: "off", off: true},
		{env: "off", flag: "off"},
		{flag: "off"},
		{env: "off", flag: dir, dir: dir},
		{env: dir, dir: dir},
	} {
		t.Setenv("FGTOP_HISTORY", c.env)
		f := &consoleFlags{history: c.flag}
		var uopts console.Options
		f.historyDir(&uopts, engine.Options{}, io.Discard)
		if got, off := uopts.History, uopts.HistoryOffByEnv; got != c.dir || off != c.off {
			t.Errorf("FGTOP_HISTORY=%q --history %q: %q %v, want %q %v", c.env, c.flag, got, off, c.dir, c.off)
		}
	}
}
