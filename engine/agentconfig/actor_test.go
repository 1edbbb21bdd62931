package agentconfig

import (
	"os"
	"os/user"
	"testing"
)

func TestLocalOperator(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skipf("no host name here: %v", err)
	}
	me, err := user.Current()
	if err != nil {
		t.Skipf("no current user here: %v", err)
	}
	tests := []struct {
		sudoUser, want string
	}{
		{"alice", "alice"},
		{"", me.Username},
	}
	for _, tt := range tests {
		t.Setenv("SUDO_USER", tt.sudoUser)
		got := LocalOperator()
		want := Actor{Name: tt.want, Origin: "cli@" + host, Role: RoleOperator}
		if got != want {
			t.Errorf("SUDO_USER=%q: %+v, want %+v", tt.sudoUser, got, want)
		}
		if !got.CanWrite() {
			t.Errorf("the local operator may not write")
		}
	}
}
