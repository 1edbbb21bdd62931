package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/screen"
)

// TestConsoleOptions: the look reaches the options, light and dark also
// set the background, a theme that cannot be loaded is a *ThemeError
// naming it, and each call has a record cache of its own (one per
// process: the command calls it once).
func TestConsoleOptions(t *testing.T) {
	builtin := themes.Names()[0]
	for _, tc := range []struct {
		name      string
		look      Look
		wantBg    string
		wantTheme bool
		wantErr   bool
	}{
		{"detected", Look{}, "", false, false},
		{"light", Look{Theme: "light"}, "light", true, false},
		{"dark, read-only, ASCII", Look{Theme: "dark", ReadOnly: true, ASCII: true}, "dark", true, false},
		{"a built-in theme", Look{Theme: builtin}, "", true, false},
		{"no such theme", Look{Theme: "no-such-theme"}, "", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ConsoleOptions("node-a", tc.look)
			var te *ThemeError
			if tc.wantErr {
				if !errors.As(err, &te) || te.Name != tc.look.Theme || te.Err == nil {
					t.Fatalf("ConsoleOptions(%+v): %v; want a *ThemeError naming %q", tc.look, err, tc.look.Theme)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Background != tc.wantBg || (o.Theme != nil) != tc.wantTheme {
				t.Errorf("background %q, theme %v; want %q, a theme %v", o.Background, o.Theme != nil, tc.wantBg, tc.wantTheme)
			}
			if o.NodeName != "node-a" || o.ReadOnly != tc.look.ReadOnly || o.ASCII != tc.look.ASCII {
				t.Errorf("options %q read-only %v ASCII %v; want node-a, %v, %v", o.NodeName, o.ReadOnly, o.ASCII, tc.look.ReadOnly, tc.look.ASCII)
			}
			again, _ := ConsoleOptions("node-a", tc.look)
			if o.Records == nil || o.Records == again.Records {
				t.Errorf("record caches %p and %p: want one of its own each call", o.Records, again.Records)
			}
		})
	}
}

// TestConsoleActor: the console acts as the person at the terminal, from
// "console"; a read-only console as a viewer.
func TestConsoleActor(t *testing.T) {
	at := agentconfig.Actor{Name: "alice", Origin: "cli@host", Role: agentconfig.RoleOperator}
	if got := consoleActor(at, false); got.Name != "alice" || got.Origin != "console" || got.Role != agentconfig.RoleOperator {
		t.Errorf("consoleActor: %+v", got)
	}
	if got := consoleActor(at, true); got.Name != "alice" || got.Origin != "console" || got.Role != agentconfig.RoleViewer {
		t.Errorf("read-only consoleActor: %+v", got)
	}
}

// TestFailed: a panic ends the console with an error (and a
// drawing panic's stack on stderr), though Bubble Tea calls it killed;
// a quit, a kill or a stop does not.
func TestFailed(t *testing.T) {
	live := context.Background()
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	draw := &screen.DrawPanicError{Value: "broken", Stack: []byte("goroutine 7 [running]: draw")}
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		err       error
		want      bool
		wantStack bool
	}{
		{"quit", live, nil, false, false},
		{"killed", live, tea.ErrProgramKilled, false, false},
		{"stopped", stopped, errors.New("read: input closed"), false, false},
		{"failed", live, errors.New("read: input closed"), true, false},
		{"model panic", live, fmt.Errorf("%w: %w", tea.ErrProgramKilled, tea.ErrProgramPanic), true, false},
		{"model panic while stopping", stopped, fmt.Errorf("%w: %w", tea.ErrProgramKilled, tea.ErrProgramPanic), true, false},
		{"drawing panic", live, draw, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := Failed(tc.ctx, tc.err, &stderr); got != tc.want {
				t.Errorf("Failed(%v) = %v; want %v", tc.err, got, tc.want)
			}
			if got := strings.Contains(stderr.String(), "goroutine 7"); got != tc.wantStack {
				t.Errorf("stack on stderr %v, want %v: %q", got, tc.wantStack, stderr.String())
			}
		})
	}
}
