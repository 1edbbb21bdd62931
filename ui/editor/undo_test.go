package editor

import "testing"

// TestRollbackCommandPastes: the undo command the console shows pastes
// into a shell as one --config word, whatever the path holds.
func TestRollbackCommandPastes(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/etc/backend.ai/agent.toml", "fgtop rollback --config /etc/backend.ai/agent.toml"},
		{"/srv/my agents/agent.toml", "fgtop rollback --config '/srv/my agents/agent.toml'"},
		{"/srv/it's/agent.toml", `fgtop rollback --config '/srv/it'\''s/agent.toml'`},
		{"/srv/$HOME/a.toml", "fgtop rollback --config '/srv/$HOME/a.toml'"},
	} {
		if got := RollbackCommand(c.path); got != c.want {
			t.Errorf("%q: %q, want %q", c.path, got, c.want)
		}
	}
}
