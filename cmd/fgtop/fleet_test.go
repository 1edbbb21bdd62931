package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/sshtest"
)

// fleetNode is one `fgtop serve --demo` on a loopback port.
type fleetNode struct {
	name    string
	addr    string
	hostKey string // the host key file
	node    *demo.Node
	cancel  context.CancelFunc
	done    chan error
	stopped bool
	sf      *serveFlags
	history string // its --history ("": the default)
}

// start runs the node's server (again: on the same address and host key
// after stop).
func (n *fleetNode) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel, n.done, n.stopped = cancel, make(chan error, 1), false
	addrc := make(chan string, 1)
	nodec := make(chan *demo.Node, 1)
	sf := *n.sf
	go func() {
		n.done <- runServe(ctx, serveRun{src: &sourceFlags{}, console: &consoleFlags{ascii: true, theme: "dark", history: n.history}, serve: &sf,
			stderr: io.Discard, ready: func(a string) { addrc <- a }, demoNode: func(d *demo.Node) { nodec <- d }})
	}()
	select {
	case n.addr = <-addrc:
	case err := <-n.done:
		t.Fatalf("serve %s: %v", sf.node, err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	n.node = <-nodec
	n.sf.listen = n.addr // a restart comes back on the same address
}

// stop ends the node's server, as a node going down does.
func (n *fleetNode) stop(t *testing.T) {
	t.Helper()
	if n.stopped {
		return
	}
	n.stopped = true
	n.cancel()
	select {
	case err := <-n.done:
		if err != nil {
			t.Errorf("serve %s: %v", n.name, err)
		}
	case <-time.After(15 * time.Second):
		t.Errorf("serve %s did not stop", n.name)
	}
}

// startFleet starts count demo nodes named node1..nodeN, every one
// authorizing the same keys, and returns them with the client's key file
// and a known_hosts file listing each node's host key.
func startFleet(t *testing.T, count int) ([]*fleetNode, string, string) {
	t.Helper()
	return startFleetWith(t, count, func(int) string { return "" })
}

// startFleetWith is startFleet with each node's --history.
func startFleetWith(t *testing.T, count int, history func(i int) string) ([]*fleetNode, string, string) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	keys := sshtest.NewKeys(t)
	idPath := filepath.Join(dir, "id_viewer")
	keys.Viewer.WritePrivate(t, idPath)
	var known strings.Builder
	var nodes []*fleetNode
	for i := range count {
		nd := t.TempDir()
		keysPath := filepath.Join(nd, "authorized_keys")
		sshtest.WriteAtomic(t, keysPath, keys.AuthorizedKeys())
		sf := &serveFlags{listen: "127.0.0.1:0", authorizedKeys: keysPath, hostKey: filepath.Join(nd, "host_key"),
			maxSessions: 8, logPath: filepath.Join(nd, "serve.log"), demo: true, seed: int64(i + 1), node: fmt.Sprintf("node%d", i+1)}
		n := &fleetNode{name: sf.node, hostKey: sf.hostKey, sf: sf, history: history(i)}
		n.start(t)
		known.WriteString(sshtest.KnownHosts(n.addr, sshtest.HostKey(t, n.hostKey)))
		nodes = append(nodes, n)
		t.Cleanup(func() { n.stop(t) })
	}
	khPath := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(khPath, []byte(known.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return nodes, idPath, khPath
}

// runFleetCmd runs `fgtop fleet ARGS` in process and returns its stdout,
// stderr and exit code.
func runFleetCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(append([]string{"fleet"}, args...))
	err := root.ExecuteContext(context.Background())
	code := exitOK
	if err != nil {
		code = exitBadUsage
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), code
}

func hostsOf(nodes []*fleetNode) string {
	var hs []string
	for _, n := range nodes {
		hs = append(hs, n.addr)
	}
	return strings.Join(hs, ",")
}

// devicesOf is what the fleet JSON lists for a node, computed from the
// node's own `snapshot --json` document: held, capacity and free in one
// form (fleet.OneForm), as the fleet lists them.
func devicesOf(t *testing.T, doc []byte) string {
	t.Helper()
	var s report.Snapshot
	if err := json.Unmarshal(doc, &s); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range s.Devices {
		if d.Plugin == "cpu" || d.Plugin == "mem" {
			continue
		}
		if d.Capacity == nil {
			out = append(out, fmt.Sprintf("%s %s %s/%s free %s", d.ID, d.Slot, d.Total, d.Capacity, d.Free))
			continue
		}
		held, capacity, free := fleet.OneForm(d.Total, *d.Capacity)
		out = append(out, fmt.Sprintf("%s %s %s/%s free %s", d.ID, d.Slot, held, capacity, free))
	}
	return strings.Join(out, "; ")
}

// TestFleetOnceJSON is the check: three `fgtop serve --demo`
// endpoints through `fleet --hosts ... --once --json`, each node's
// devices equal to its own snapshot (the nodes paused, so both sides see
// one state).
func TestFleetOnceJSON(t *testing.T) {
	nodes, id, kh := startFleet(t, 3)
	want := map[string]string{}
	for _, n := range nodes {
		n.node.Pause()
		s, err := engine.Build(context.Background(), n.node.EngineOptions())
		if err != nil {
			t.Fatal(err)
		}
		s.Node = n.name
		doc, err := report.Marshal(report.FromSnapshot(s), false)
		if err != nil {
			t.Fatal(err)
		}
		want[n.name] = devicesOf(t, doc)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, stderr, code := runFleetCmd(t, "--hosts", hostsOf(nodes), "--identity", id, "--known-hosts", kh, "--once", "--json", "--timeout", "15s")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var got fleet.JSONFleet
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if len(got.Nodes) != 3 {
			t.Fatalf("%d nodes: %s", len(got.Nodes), out)
		}
		same := true
		var diff []string
		for i, n := range got.Nodes {
			if n.Node != nodes[i].name || n.Address != nodes[i].addr || n.State != fleet.Live || len(n.Devices) == 0 {
				t.Fatalf("node %d: %+v", i, n)
			}
			var ds []string
			for _, d := range n.Devices {
				ds = append(ds, fmt.Sprintf("%s %s %s/%s free %s", d.Device, d.Slot, d.Held, d.Capacity, d.Free))
			}
			if g := strings.Join(ds, "; "); g != want[n.Node] {
				same = false
				diff = append(diff, fmt.Sprintf("%s:\n got %s\nwant %s", n.Node, g, want[n.Node]))
			}
		}
		if same {
			// The raw text carries decimals as strings, exactly.
			if !strings.Contains(out, `"capacity": "`) {
				t.Fatalf("amounts are not decimal strings: %s", out)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fleet never showed the paused nodes' state:\n%s", strings.Join(diff, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestFleetNodeGoesAway: a node killed mid-run turns stale, then
// unreachable, and stays listed; the others stay live; restarted, it is
// live again.
func TestFleetNodeGoesAway(t *testing.T) {
	nodes, id, kh := startFleet(t, 3)
	f := &fleetFlags{hosts: hostsOf(nodes), identities: []string{id}, knownHosts: []string{kh}, timeout: 10 * time.Second,
		staleAfter: 600 * time.Millisecond, unreachable: 2500 * time.Millisecond, heartbeat: 200 * time.Millisecond,
		alloc: allocFlags{strategy: "evenly"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src, err := f.start(ctx, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Wait()
	defer cancel()
	waitFleet(t, src.Tracker, "every node live", func(fl *fleet.Fleet) bool {
		for _, n := range fl.Nodes {
			if n.State != fleet.Live {
				return false
			}
		}
		return true
	})
	nodes[1].stop(t)
	var seen []fleet.State
	waitFleet(t, src.Tracker, "node2 unreachable", func(fl *fleet.Fleet) bool {
		n := fl.Node(nodes[1].addr)
		if len(seen) == 0 || seen[len(seen)-1] != n.State {
			seen = append(seen, n.State)
		}
		return n.State == fleet.Unreachable
	})
	fl := src.Tracker.Latest()
	if len(fl.Nodes) != 3 {
		t.Fatalf("%d nodes listed", len(fl.Nodes))
	}
	gone := fl.Node(nodes[1].addr)
	if gone.Snap == nil || gone.Name != "node2" || gone.Reason == "" {
		t.Fatalf("the gone node lost its last figures or its reason: %+v", gone)
	}
	if !strings.Contains(fmt.Sprint(seen), string(fleet.Stale)) {
		t.Errorf("states %v: never stale before unreachable", seen)
	}
	for _, i := range []int{0, 2} {
		if s := fl.Node(nodes[i].addr).State; s != fleet.Live {
			t.Errorf("%s: %s", nodes[i].name, s)
		}
	}
	t.Logf("node2: %s (%s); states seen %v", gone.State, gone.Reason, seen)
	// It comes back on the same address with the same host key: the fleet
	// reconnects (backoff) and it is live again, with fresh figures.
	nodes[1].start(t)
	waitFleet(t, src.Tracker, "node2 live again", func(fl *fleet.Fleet) bool {
		n := fl.Node(nodes[1].addr)
		return n.State == fleet.Live && n.Updated.After(gone.Updated)
	})
}

func waitFleet(t *testing.T, tr *fleet.Tracker, what string, ok func(*fleet.Fleet) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub := tr.Subscribe(ctx)
	for fl := range sub {
		if ok(fl) {
			return
		}
	}
	t.Fatalf("timed out waiting for %s: %+v", what, tr.Latest().Nodes)
}

// TestFleetHostKeys: a changed host key and an unknown host are refused
// with ssh's words, and the node is listed unreachable with them.
func TestFleetHostKeys(t *testing.T) {
	nodes, id, _ := startFleet(t, 2)
	other := sshtest.NewKeys(t).Operator.PublicKey()
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	// node1's line has another key; node2 is not there at all.
	if err := os.WriteFile(kh, []byte(sshtest.KnownHosts(nodes[0].addr, other)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runFleetCmd(t, "--hosts", hostsOf(nodes), "--identity", id, "--known-hosts", kh, "--once", "--json", "--timeout", "10s")
	if code != exitProblem {
		t.Fatalf("exit %d, want %d: %s", code, exitProblem, stderr)
	}
	var got fleet.JSONFleet
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, want := range []string{"REMOTE HOST IDENTIFICATION HAS CHANGED", "is not in known_hosts"} {
		n := got.Nodes[i]
		if n.State != fleet.Unreachable || !strings.Contains(n.Error, want) || len(n.Devices) != 0 {
			t.Errorf("%s: state %s, error %q; want unreachable with %q", n.Address, n.State, n.Error, want)
		}
	}
}

// TestFleetKnownHostsWithJunk is the operator tour's check: a line no ssh
// can read in known_hosts (given with --known-hosts, or the default
// ~/.ssh/known_hosts) used to stop `fgtop fleet` with exit 2
// ("knownhosts: KH:6: ssh: short read"); OpenSSH skips it. The fleet now
// says once on stderr which lines of which file it left out and reads the
// node, and a changed key is still refused, named at its line.
func TestFleetKnownHostsWithJunk(t *testing.T) {
	nodes, id, kh := startFleet(t, 1)
	good, err := os.ReadFile(kh)
	if err != nil {
		t.Fatal(err)
	}
	blob := strings.Fields(string(good))[2]
	junk := "garbage line here\n" + "[127.0.0.1]:1 ssh-ed25519 " + blob[:64] + "!" + blob[65:] + "\n"
	changed := sshtest.KnownHosts(nodes[0].addr, sshtest.NewKeys(t).Operator.PublicKey())
	for _, tc := range []struct {
		name    string
		file    string
		flag    bool // --known-hosts FILE, else ~/.ssh/known_hosts
		code    int
		nodeErr string // in the node's error; "" for live
		skipped string
	}{
		{"--known-hosts", junk + string(good), true, exitOK, "", "left out 2 lines that are no host key (ssh skips them too): line 1 (the key is not a public key fgtop knows), line 2 (the key is not base64)"},
		{"~/.ssh/known_hosts", string(good) + "\n" + junk, false, exitOK, "", "left out 2 lines that are no host key (ssh skips them too): line 3 (the key is not a public key fgtop knows), line 4 (the key is not base64)"},
		{"a changed key after junk", junk + changed, true, exitProblem, "REMOTE HOST IDENTIFICATION HAS CHANGED", "left out 2 lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := fakeHome(t)
			file := filepath.Join(home, ".ssh", "known_hosts")
			args := []string{"--hosts", nodes[0].addr, "--identity", id, "--once", "--json", "--timeout", "10s"}
			if tc.flag {
				file = filepath.Join(t.TempDir(), "kh")
				args = append(args, "--known-hosts", file)
			}
			if err := os.WriteFile(file, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := runFleetCmd(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			if want := "fgtop fleet: known_hosts " + file + ": " + tc.skipped; !strings.Contains(stderr, want) || strings.Count(stderr, "known_hosts "+file+": left out") != 1 {
				t.Errorf("stderr %q\nwant it once: %q", stderr, want)
			}
			var got fleet.JSONFleet
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Nodes) != 1 {
				t.Fatalf("%v: %s", err, out)
			}
			n := got.Nodes[0]
			if tc.nodeErr == "" && (n.State != fleet.Live || len(n.Devices) == 0) {
				t.Errorf("node %s %q, want it live with its devices", n.State, n.Error)
			}
			if tc.nodeErr != "" && (n.State != fleet.Unreachable || !strings.Contains(n.Error, tc.nodeErr) || !strings.Contains(n.Error, file+":3")) {
				t.Errorf("node %s %q, want unreachable with %q at %s:3", n.State, n.Error, tc.nodeErr, file)
			}
		})
	}
}
