package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/internal/sshtest"
)

// TestFleetRefusesImpossibleAmounts is the operator tour's check: a fake
// `fgtop serve` whose snapshot says a GPU of 4.00 shares holds -5.00, or
// offers -1.00, was shown live (held -3.50/4.00 and 7.70 free) where a
// NaN capacity was refused. Each is now refused the same way: the node
// is unreachable with the device and the field named, beside its address
// on stderr, and `--once` exits 1.
func TestFleetRefusesImpossibleAmounts(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	const head = `{"schema":"fgtop.snapshot/v1","node":"n1","allocator":{"allocation_mode":"fractional","quantum_size":"0.01"},`
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"negative held", head + `"devices":[{"key":"cuda:0","plugin":"cuda","id":"0","slot":"cuda.shares","capacity":"4.00","held":{"cuda.shares":"-5.00"},"kernels":1}]}`,
			`bad snapshot from the node: device cuda:0: held cuda.shares: "-5.00" is negative`},
		{"negative capacity", head + `"devices":[{"key":"cuda:0","plugin":"cuda","id":"0","slot":"cuda.shares","capacity":"-1.00"}]}`,
			`bad snapshot from the node: device cuda:0: capacity -1.00 is negative`},
		{"negative allocation", head + `"devices":[{"key":"cuda:0","plugin":"cuda","id":"0","slot":"cuda.shares","capacity":"4.00","held":{"cuda.shares":"1.00"},"kernels":1}],` +
			`"kernels":[{"id":"00000000-0000-4000-8000-000000000000","agent":"a","state":"ok","slots":{"cuda.shares":"1.00"},"allocations":{"cuda.shares":{"0":"-1.00"}}}]}`,
			`bad snapshot from the node: kernel 00000000-0000-4000-8000-000000000000: cuda.shares on 0: "-1.00" is negative`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, known := hostilePeer(t, "snapshot", []byte(tc.doc+"\n"))
			dir := t.TempDir()
			kh := filepath.Join(dir, "known_hosts")
			if err := os.WriteFile(kh, []byte(known), 0o600); err != nil {
				t.Fatal(err)
			}
			id := filepath.Join(dir, "id")
			sshtest.NewKey(t).WritePrivate(t, id)
			out, stderr, code := runFleetCmd(t, "--hosts", addr, "--identity", id, "--known-hosts", kh, "--once", "--json", "--timeout", "10s")
			if code != exitProblem {
				t.Errorf("exit %d, want %d: %s", code, exitProblem, stderr)
			}
			var got fleet.JSONFleet
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Nodes) != 1 {
				t.Fatalf("%v: %s", err, out)
			}
			n := got.Nodes[0]
			if n.State != fleet.Unreachable || !strings.Contains(n.Error, tc.want) || len(n.Devices) != 0 {
				t.Errorf("node %s %q with %d devices; want unreachable, without figures, with %q", n.State, n.Error, len(n.Devices), tc.want)
			}
			if !strings.Contains(stderr, addr) || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not name %s and %q", stderr, addr, tc.want)
			}
		})
	}
}
