package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/hostile"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/ui/ssh/sshtest"
)

// hostileLine is a demo node's snapshot line with hostile.Payload planted
// in every string.
func hostileLine(t *testing.T) []byte {
	t.Helper()
	n, err := demo.Start(context.Background(), demo.Options{Seed: 5, Speed: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	n.Pause()
	s, err := engine.Build(context.Background(), n.EngineOptions())
	_ = n.Close()
	if err != nil {
		t.Fatal(err)
	}
	line, err := report.Marshal(report.FromSnapshot(hostile.Snapshot(s)), false)
	if err != nil {
		t.Fatal(err)
	}
	return append(line, '\n')
}

// hostilePeer is a fake `fgtop serve` on a loopback port that lets anyone
// in and answers the fleet's exec with what mode says: "snapshot" (a
// hostile snapshot, then silence), "stderr" (a refusal on stderr holding
// the payload) or "bad" (a snapshot that does not parse, its device key
// holding the payload). It returns its address and known_hosts line.
func hostilePeer(t *testing.T, mode string, line []byte) (addr, known string) {
	t.Helper()
	host := sshtest.NewKey(t)
	cfg := &gossh.ServerConfig{PublicKeyCallback: func(gossh.ConnMetadata, gossh.PublicKey) (*gossh.Permissions, error) { return nil, nil }}
	cfg.AddHostKey(host.Signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go servePeer(c, cfg, mode, line)
		}
	}()
	return ln.Addr().String(), sshtest.KnownHosts(ln.Addr().String(), host.PublicKey())
}

func servePeer(c net.Conn, cfg *gossh.ServerConfig, mode string, line []byte) {
	defer c.Close()
	sc, chans, reqs, err := gossh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go gossh.DiscardRequests(reqs)
	for nc := range chans {
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			for r := range creqs {
				_ = r.Reply(r.Type == "exec", nil)
				if r.Type != "exec" {
					continue
				}
				switch mode {
				case "snapshot":
					_, _ = ch.Write(line)
				case "stderr":
					_, _ = fmt.Fprintf(ch.Stderr(), "fgtop serve: refused %s\r\n", hostile.Payload)
					_, _ = ch.SendRequest("exit-status", false, gossh.Marshal(struct{ Status uint32 }{1}))
					time.Sleep(100 * time.Millisecond) // stderr before the close, as a real refusal
					_ = ch.Close()
				case "bad":
					key, _ := json.Marshal("k" + hostile.Payload)
					doc := fmt.Sprintf(`{"schema":"fgtop.snapshot/v1","node":"n","devices":[{"key":%s,"plugin":"cuda","id":"0","capacity":"NaN"}]}`+"\n", key)
					_, _ = ch.Write([]byte(doc))
				}
			}
		}()
	}
}

// runMain runs fgtop's main with args and returns what it wrote to the
// real stdout and stderr (files), as a terminal would get it.
func runMain(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	errF, err := os.Create(filepath.Join(dir, "err"))
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outF, errF
	code = run(args)
	os.Stdout, os.Stderr = oldOut, oldErr
	_ = outF.Close()
	_ = errF.Close()
	o, _ := os.ReadFile(outF.Name())
	e, _ := os.ReadFile(errF.Name())
	return string(o), string(e), code
}

func requireClean(t *testing.T, what, s string) {
	t.Helper()
	if f := hostile.Foreign(s); len(f) > 0 {
		t.Fatalf("%s: raw bytes reach the terminal: %v\n%s", what, f, s)
	}
}

// TestHostileFleetNodes: three hostile peers (one sending a snapshot with
// escape sequences in every field, one refusing with them on stderr, one
// sending a snapshot that does not parse, naming them): `fleet --once`,
// its JSON and --fit print nothing raw on stdout or stderr, and still
// show each node (escaped).
func TestHostileFleetNodes(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	line := hostileLine(t)
	dir := t.TempDir()
	var hosts []string
	var known strings.Builder
	for _, mode := range []string{"snapshot", "stderr", "bad"} {
		addr, kh := hostilePeer(t, mode, line)
		hosts = append(hosts, addr)
		known.WriteString(kh)
	}
	kh := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(kh, []byte(known.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	id := filepath.Join(dir, "id")
	sshtest.NewKey(t).WritePrivate(t, id)
	base := []string{"fleet", "--hosts", strings.Join(hosts, ","), "--identity", id, "--known-hosts", kh, "--timeout", "10s"}

	out, errOut, code := runMain(t, append(base, "--once")...)
	requireClean(t, "fleet --once stdout", out)
	requireClean(t, "fleet --once stderr", errOut)
	if !strings.Contains(out, `\x1b]52;c;`) || !strings.Contains(errOut, "refused") || !strings.Contains(errOut, "bad snapshot") {
		t.Fatalf("exit %d: the nodes are not all shown:\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	out, errOut, _ = runMain(t, append(base, "--once", "--json")...)
	requireClean(t, "fleet --once --json stdout", out)
	requireClean(t, "fleet --once --json stderr", errOut)
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("the JSON no longer parses: %v\n%s", err, out)
	}

	out, errOut, _ = runMain(t, append(base, "--fit", "cuda.shares=0.1")...)
	requireClean(t, "fleet --fit stdout", out)
	requireClean(t, "fleet --fit stderr", errOut)
}

// TestHostilePrometheus: a Prometheus whose labels, then whose error
// bodies, carry escape sequences: `fleet --prometheus --once` prints
// nothing raw on stdout or stderr.
func TestHostilePrometheus(t *testing.T) {
	for _, fail := range []bool{false, true} {
		srv := httptest.NewServer(hostile.Prometheus("gpu-07", fail))
		for _, extra := range [][]string{nil, {"--json"}, {"--fit", "cuda.shares=0.1"}} {
			args := append([]string{"fleet", "--prometheus", srv.URL, "--once", "--timeout", "5s"}, extra...)
			done := make(chan struct{})
			var out, errOut string
			go func() {
				defer close(done)
				out, errOut, _ = runMain(t, args...)
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("%v did not end", args)
			}
			requireClean(t, fmt.Sprintf("%v stdout", args), out)
			requireClean(t, fmt.Sprintf("%v stderr", args), errOut)
			if !fail && extra == nil && !strings.Contains(out, `gpu-07\x1b]52;c;`) {
				t.Fatalf("%v: the node is not shown, escaped:\n%s\n%s", args, out, errOut)
			}
			if fail && !strings.Contains(errOut, "boom") {
				t.Fatalf("%v: the error is not shown, escaped:\n%s", args, errOut)
			}
		}
		srv.Close()
	}
}

// TestHostileKernelFiles: kernels whose resource.txt and recovery.json
// hold escape sequences (a device id, the container id, a value that does
// not parse, the image, the architecture): `check`, `check --json` and
// `snapshot` print nothing raw on stdout or stderr, and still name what
// is wrong (escaped).
func TestHostileKernelFiles(t *testing.T) {
	fix := testfix.Dir(t, "backendai")
	mock, etcd := filepath.Join(fix, "mock-accelerator.toml"), filepath.Join(fix, "mock-accelerator.etcd.json")
	root := t.TempDir()
	res, err := os.ReadFile(filepath.Join(fix, "resource.cuda-shares-single.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(filepath.Join(fix, "recovery.numa0-batch.json"))
	if err != nil {
		t.Fatal(err)
	}
	const gpu = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04"
	write := func(id, name, text string) {
		dir := filepath.Join(root, id, "config")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k0, k1 := "00000000-0000-4000-8000-000000000000", "11111111-1111-4111-8111-111111111111"
	evil := strings.Replace(string(res), "CUDA.SHARES_SHARES="+gpu, "CUDA.SHARES_SHARES=gpu"+strings.TrimSuffix(hostile.Payload, "\x9b"), 1)
	evil = strings.Replace(evil, "CID=", "CID=\x1b]8;;http://evil/\x1b\\", 1)
	write(k0, "resource.txt", evil)
	r := strings.ReplaceAll(string(rec), "21e330bf-e15a-47a9-9183-df27ccd257b6", k0)
	r = strings.Replace(r, `"name":"python-pytorch"`, `"name":"\u001b]8;;http://x/\u001b\\py\u001b]8;;\u001b\\"`, 1)
	write(k0, "recovery.json", r)
	write(k1, "resource.txt", strings.Replace(string(res), ":0.50\n", ":0.5\x1b]52;c;eA==\x07\u009b\n", 1))
	write(k1, "recovery.json", strings.Replace(strings.ReplaceAll(string(rec), "21e330bf-e15a-47a9-9183-df27ccd257b6", k1),
		`"owner_user_id":"35e02027-c5ba-4d6c-9708-7623f41044c1"`, `"owner_user_id":"u\u001b]52;c;eA==\u0007"`, 1))
	src := []string{"--scratch-root", root, "--devices", mock, "--mock-etcd", etcd}
	cfg := []string{"--config", filepath.Join(fix, "agent.multi-agent.slot-based.toml"), "--host-cpus", "0-255", "--host-mem", "2t"}
	for _, args := range [][]string{{"check"}, {"check", "--json"}, {"snapshot"}, {"snapshot", "--compact"}} {
		full := append(append(args, src...), cfg...)
		if args[0] == "snapshot" {
			full = append(args, src...)
		}
		out, errOut, _ := runMain(t, full...)
		requireClean(t, fmt.Sprintf("%v stdout", args), out)
		requireClean(t, fmt.Sprintf("%v stderr", args), errOut)
		if len(args) == 1 && args[0] == "check" && !strings.Contains(out+errOut, `gpu\x1b]52;c;`) {
			t.Fatalf("%v does not name the planted device, escaped:\n%s\n%s", args, out, errOut)
		}
	}
}
