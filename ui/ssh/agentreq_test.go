package sshserve

import "testing"

// TestAgentForwardingRefused: a client asking for its ssh-agent to be
// forwarded is told no (nothing is forwarded), before and after the
// shell starts, by operators and viewers alike.
func TestAgentForwardingRefused(t *testing.T) {
	f := startServer(t, nil)
	for _, who := range []struct {
		user string
		op   bool
	}{{"victor", false}, {"olga", true}} {
		key := f.viewer
		if who.op {
			key = f.operator
		}
		_, sess := f.session(t, who.user, key)
		ok, err := sess.SendRequest("auth-agent-req@openssh.com", true, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Fatalf("%s: auth-agent-req answered yes", who.user)
		}
	}
}
