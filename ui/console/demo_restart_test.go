package console

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestDemoRestartKey: R exists only in a demo console (a DemoRestart hook)
// and only for an operator; it runs the hook off the loop and flashes
// what it did. Elsewhere R is no key at all, in the map and the help.
func TestDemoRestartKey(t *testing.T) {
	calls := 0
	hook := func() (string, error) {
		calls++
		return "restarted i-demo-numa0: they place with the partition in agent.toml now", nil
	}
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{DemoRestart: hook})
	typeKeys(a, "R")
	if calls != 1 || !strings.Contains(a.Flash.Text, "restarted i-demo-numa0") {
		t.Fatalf("R: %d calls, flash %q", calls, a.Flash.Text)
	}
	typeKeys(a, "?")
	if !strings.Contains(screen(a), "demo: restart the agents whose partition changed") {
		t.Errorf("the help does not list R:\n%s", screen(a))
	}

	for _, o := range []Options{{}, {ReadOnly: true, DemoRestart: hook}} {
		b := testApp(t, 120, 40, fake.Node(fake.Options{}), o)
		typeKeys(b, "R")
		// A viewer is told R is an operator's key: esc drops that flash,
		// which the help's footer would show; only the help's list counts.
		b.Update(keyCode(tea.KeyEscape))
		typeKeys(b, "?")
		if strings.Contains(screen(b), "demo: restart") {
			t.Errorf("R offered without the demo hook or to a viewer (%+v)", o)
		}
	}
	if calls != 1 {
		t.Errorf("the hook ran %d times", calls)
	}
}

// TestDemoRestartPendingSaysR: in a demo console a pending restart says in
// the header which key restarts the agents; a console on a real node (no
// hook) and a viewer have no such key and say only "restart pending".
func TestDemoRestartPendingSaysR(t *testing.T) {
	pending := func() *model.Snapshot {
		s := fake.Node(fake.Options{})
		s.Agents[0].Restart.State = model.RestartPending
		return s
	}
	hook := func() (string, error) { return "", nil }
	a := testApp(t, 160, 40, pending(), Options{DemoRestart: hook})
	if v := screen(a); !strings.Contains(v, "restart pending (R restarts)") {
		t.Errorf("the demo's header:\n%s", strings.SplitN(v, "\n", 3)[0])
	}
	for _, o := range []Options{{}, {ReadOnly: true, DemoRestart: hook}} {
		b := testApp(t, 160, 40, pending(), o)
		if v := screen(b); !strings.Contains(v, "restart pending") || strings.Contains(v, "(R restarts)") {
			t.Errorf("%+v: header:\n%s", o, strings.SplitN(v, "\n", 3)[0])
		}
	}
	// In the editor R lists the draft's refusals: the header says to
	// leave it first.
	snap := pending()
	e := testApp(t, 160, 40, snap, Options{Actor: alice, DemoRestart: hook, Desk: testDesk(fixtureConfig(t), snap)})
	typeKeys(e, "e")
	if e.ed() == nil {
		t.Fatalf("no editor:\n%s", screen(e))
	}
	if v := screen(e); !strings.Contains(v, "restart pending (esc, then R restarts)") {
		t.Errorf("the editor's header:\n%s", strings.SplitN(v, "\n", 3)[0])
	}
}
