package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/hostile"
	"github.com/fgtop/fgtop/internal/sshtest"
	"github.com/fgtop/fgtop/internal/testfix"
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
	addr, host := sshtest.ExecPeer(t, func(ch gossh.Channel) {
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
	})
	return addr, sshtest.KnownHosts(addr, host.PublicKey())
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

// TestHostileFleetInTmux runs the real binary's fleet console in tmux
// (clipboard passing on) against a hostile peer: the pane shows the
// payload escaped, the window title holds no escape, and neither the
// payload's OSC 52 nor `y` on a row of the peer's console puts a control character
// or the payload's command on tmux's clipboard (the copy does reach it: the log
// shows the escaped id tmux got).
func TestHostileFleetInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fgtop")
	bctx, bcancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer bcancel()
	if out, err := exec.CommandContext(bctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addr, known := hostilePeer(t, "snapshot", hostileLine(t))
	kh := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(kh, []byte(known), 0o600); err != nil {
		t.Fatal(err)
	}
	id := filepath.Join(dir, "id")
	sshtest.NewKey(t).WritePrivate(t, id)
	sock := fmt.Sprintf("fgtop-hostile-%d-%s", os.Getpid(), filepath.Base(dir))
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	cmd := fmt.Sprintf("env SSH_AUTH_SOCK= TERM=xterm-256color %s fleet --hosts %s --identity %s --known-hosts %s", bin, addr, id, kh)
	if out, err := tmux("new-session", "-d", "-s", "h", "-x", "160", "-y", "48", cmd); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	_, _ = tmux("set-option", "-g", "set-clipboard", "on")
	_, _ = tmux("set-option", "-g", "allow-rename", "on")
	pane := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			out, err := tmux("capture-pane", "-p", "-t", "h")
			if err == nil && strings.Contains(out, want) {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("the pane never showed %q; last:\n%s (%v)", want, out, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	checkTmux := func(what string) {
		t.Helper()
		title, _ := tmux("display-message", "-p", "-t", "h", "#{pane_title}")
		if strings.ContainsFunc(strings.TrimSuffix(title, "\n"), func(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }) {
			t.Fatalf("%s: the title holds control characters: %q", what, title)
		}
		bufs, _ := tmux("list-buffers", "-F", "#{buffer_name}")
		for _, b := range strings.Fields(bufs) {
			content, _ := tmux("show-buffer", "-b", b)
			if strings.Contains(content, "rm -rf") || strings.ContainsAny(content, "\n\r\x1b\a") {
				t.Fatalf("%s: tmux's clipboard got %q", what, content)
			}
		}
	}
	pane(`\x1b]52;c;`)
	checkTmux("fleet table")
	// Open the node, go to its kernels, copy one.
	for _, k := range []string{"Enter", "Tab", "Tab", "y"} {
		if out, err := tmux("send-keys", "-t", "h", k); err != nil {
			t.Fatalf("send-keys %s: %v: %s", k, err, out)
		}
		time.Sleep(300 * time.Millisecond)
	}
	pane("read-only")
	checkTmux("after y on the node's console")
	bufs, _ := tmux("list-buffers")
	title, _ := tmux("display-message", "-p", "-t", "h", "#{pane_title}")
	t.Logf("buffers: %q; title: %q", bufs, title)
	if out, _ := tmux("capture-pane", "-p", "-t", "h"); !strings.Contains(out, `\x1b]52;c;`) {
		t.Fatalf("the node's console does not show the payload escaped:\n%s", out)
	}
}
