package console

import (
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
)

// TestActorWhoNamesTheKey: over SSH the user name is the client's choice,
// so the header names the key beside it (the tour: "draft: olga" was
// whatever the operator typed); a local actor is its name alone.
func TestActorWhoNamesTheKey(t *testing.T) {
	for _, tc := range []struct {
		a    agentconfig.Actor
		want string
	}{
		{agentconfig.Actor{Name: "olga", Key: "SHA256:Ab3dE9xQzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"}, "olga key SHA256:Ab3dE9xQ"},
		{agentconfig.Actor{Name: "root"}, "root"},
		{agentconfig.Actor{Name: "x", Key: "SHA256:short"}, "x key SHA256:short"},
	} {
		if got := actorWho(tc.a); got != tc.want {
			t.Errorf("actorWho(%+v) = %q, want %q", tc.a, got, tc.want)
		}
	}
}
