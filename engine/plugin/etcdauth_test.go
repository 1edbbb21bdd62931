package plugin

import (
	"fmt"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// TestEtcdAuthWords: an etcd that asks for credentials agent.toml's [etcd]
// does not give (or gives wrong) is said in the file's words. Seen against
// a real etcd with `etcdctl auth enable`: the console's header and
// snapshot said only "cannot read the CUDA plugin settings (etcdserver:
// user name is empty)", which does not send an operator to agent.toml.
func TestEtcdAuthWords(t *testing.T) {
	o := EtcdOptions{Endpoints: []string{"127.0.0.1:2379"}}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{rpctypes.ErrUserEmpty, "etcd asks for a user and password, and agent.toml's [etcd] sets no user"},
		{fmt.Errorf("read: %w", rpctypes.ErrAuthFailed), "etcd refused the user and password of agent.toml's [etcd]"},
		{rpctypes.ErrPermissionDenied, "the etcd user of agent.toml's [etcd] may not read"},
	} {
		got := etcdErr(o, tc.err).Error()
		if !strings.HasPrefix(got, "etcd at 127.0.0.1:2379: "+tc.want) || !strings.Contains(got, tc.err.Error()) {
			t.Errorf("%v: %q; want it to begin %q and keep etcd's words", tc.err, got, tc.want)
		}
	}
}
