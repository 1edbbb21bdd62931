//go:build unix

package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/internal/sshtest"
)

// TestStreamRefusalAfterStdout: a node that refuses the stream (its
// limits) says why on stderr and ends the session: the client copies
// stderr on a goroutine of its own while the stream's reader meets the
// end of stdout, and then waits for the session, so the fleet gives the
// node's words, not "the node closed the stream". (Without the wait the
// words were lost when that goroutine came late: a race, which this
// test catches only when it goes that way.)
func TestStreamRefusalAfterStdout(t *testing.T) {
	const why = "fgtop serve: too many snapshot streams and queries (the limit is 1 of 4 sessions): try again later"
	addr, _ := sshtest.ExecPeer(t, func(ch gossh.Channel) {
		time.Sleep(50 * time.Millisecond)
		_, _ = ch.Stderr().Write([]byte("\r\n" + why + "\r\n"))
		_, _ = ch.SendRequest("exit-status", false, gossh.Marshal(struct{ Status uint32 }{1}))
		_ = ch.Close()
	})
	if err := streamFrom(t, addr); err == nil || !strings.Contains(err.Error(), "too many snapshot streams and queries") {
		t.Fatalf("stream refused: %v, want the node's words", err)
	}
}

// TestHandshakeStalled: a port that accepts and says nothing (a stopped
// fgtop serve: the kernel accepts for it) and one that sends its SSH
// version and then nothing are each worded for what the operator should
// look at, with the time waited.
func TestHandshakeStalled(t *testing.T) {
	for _, c := range []struct {
		name  string
		greet string
		// ctxAfter: the run's own time (--timeout) runs out first.
		ctxAfter time.Duration
		want     []string
	}{
		{name: "silent", want: []string{"the connection was accepted but nothing answered within 300ms", "stalled (stopped by Ctrl-Z"}},
		{name: "banner", greet: "SSH-2.0-stalled\r\n", want: []string{"the node began the SSH handshake but did not finish it within 300ms of the connection", "stalled or overloaded"}},
		// The library said "use of closed network connection".
		{name: "silent, the run's time out", ctxAfter: 200 * time.Millisecond, want: []string{"the time given (--timeout) ran out during the SSH handshake", "the node had sent nothing", "stalled (stopped by Ctrl-Z"}},
		{name: "banner, the run's time out", greet: "SSH-2.0-stalled\r\n", ctxAfter: 200 * time.Millisecond, want: []string{"the time given (--timeout) ran out during the SSH handshake", "the node began it but did not finish", "stalled or overloaded"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			held := make(chan net.Conn, 1)
			go func() {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				_, _ = io.WriteString(conn, c.greet)
				held <- conn
			}()
			defer func() {
				select {
				case conn := <-held:
					conn.Close()
				default:
				}
			}()
			cfg := &gossh.ClientConfig{User: "t", Auth: []gossh.AuthMethod{gossh.PublicKeys(sshtest.NewKey(t).Signer)},
				HostKeyCallback: gossh.InsecureIgnoreHostKey()} //nolint:gosec // a test node on loopback
			ctx, dial := context.Background(), 300*time.Millisecond
			if c.ctxAfter > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.ctxAfter)
				defer cancel()
				dial = 10 * time.Second
			}
			_, err = SnapshotAtSSH(ctx, ln.Addr().String(), cfg, SSHOptions{DialTimeout: dial}, time.Now())
			if err == nil {
				t.Fatal("a stalled handshake answered")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			if c.ctxAfter > 0 && (!errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "context deadline")) {
				t.Errorf("%q does not wrap the context's deadline, or says it in Go's words", err)
			}
		})
	}
}

// TestOnceStalledHandshake: a one-shot fleet (--once) whose --timeout
// ends while a node stalls its handshake says so, as the console and
// fleet history do, not only "no snapshot within --timeout".
func TestOnceStalledHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 1)
	go func() {
		if conn, err := ln.Accept(); err == nil {
			held <- conn // accepted by the kernel, never answered: a stopped process
		}
	}()
	defer func() {
		select {
		case conn := <-held:
			conn.Close()
		default:
		}
	}()
	addr := ln.Addr().String()
	cfg := &gossh.ClientConfig{User: "t", Auth: []gossh.AuthMethod{gossh.PublicKeys(sshtest.NewKey(t).Signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()} //nolint:gosec // a test node on loopback
	ctx, cancel := context.WithCancel(context.Background())
	tr := NewTracker([]string{addr}, "ssh", Options{})
	done := make(chan struct{})
	go func() { _ = tr.Run(ctx) }()
	go func() { defer close(done); FollowSSH(ctx, tr, addr, cfg, SSHOptions{DialTimeout: 10 * time.Second}) }()
	fl := WaitAnswered(ctx, tr, 300*time.Millisecond)
	cancel()
	<-done
	got := fl.Nodes[0].Reason
	for _, w := range []string{"ran out during the SSH handshake", "the node had sent nothing", "stalled (stopped by Ctrl-Z"} {
		if !strings.Contains(got, w) {
			t.Errorf("%q lacks %q", got, w)
		}
	}
}

// TestHandshakeNotSSH: a port that hangs up on the SSH greeting (an HTTP
// server's 400, a service that closes at once) is said to be no SSH
// server, with what it sent, not "ssh handshake failed: ssh: handshake
// failed: EOF".
func TestHandshakeNotSSH(t *testing.T) {
	for _, c := range []struct {
		name, answer, want string
		// hold: the peer stays after its answer, as a junk service
		// does, until the client hangs up.
		hold bool
	}{
		{"http", "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\r\n400 Bad Request",
			`closed the connection during the SSH handshake, having sent "HTTP/1.1 400 Bad Request", not an SSH greeting: is it an SSH server (fgtop serve)?`, false},
		{"closes at once", "", "closed the connection during the SSH handshake, having sent nothing: is it an SSH server (fgtop serve)?", false},
		{"no greeting, a long line", strings.Repeat("x", 300),
			`sent "` + strings.Repeat("x", 80) + `", not an SSH greeting (ssh: overflow reading version string): is it an SSH server (fgtop serve)?`, true},
		{"junk after the greeting", "SSH-2.0-OpenSSH_9.6\r\n" + strings.Repeat("\xff", 5000),
			`the SSH server there ("SSH-2.0-OpenSSH_9.6") broke the SSH protocol during the handshake (ssh: invalid packet length, packet too large): is it fgtop serve, with nothing between that alters the connection?`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				if c.answer != "" {
					_, _ = conn.Read(make([]byte, 256)) // the client's greeting
					_, _ = io.WriteString(conn, c.answer)
				}
				if c.hold {
					_, _ = io.Copy(io.Discard, conn)
				}
				conn.Close()
			}()
			cfg := &gossh.ClientConfig{User: "t", Auth: []gossh.AuthMethod{gossh.PublicKeys(sshtest.NewKey(t).Signer)},
				HostKeyCallback: gossh.InsecureIgnoreHostKey()} //nolint:gosec // a test node on loopback
			_, err = SnapshotAtSSH(context.Background(), ln.Addr().String(), cfg, SSHOptions{DialTimeout: 5 * time.Second}, time.Now())
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

// TestHandshakeStalledNotSSH: a peer that sends a line that is no SSH
// greeting and then waits is named by that line, when the handshake's
// own time runs out and when the caller's does, not as a stalled or
// overloaded fgtop serve.
func TestHandshakeStalledNotSSH(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_, _ = io.WriteString(conn, "220 mail.example ESMTP\r\n")
				_, _ = io.Copy(io.Discard, conn)
				conn.Close()
			}()
		}
	}()
	cfg := &gossh.ClientConfig{User: "t", Auth: []gossh.AuthMethod{gossh.PublicKeys(sshtest.NewKey(t).Signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()} //nolint:gosec // a test node on loopback
	for _, c := range []struct {
		name string
		dial time.Duration // the handshake's own time
		ctx  time.Duration // the caller's
		want string
	}{
		{"its own time", 300 * time.Millisecond, time.Minute,
			`sent "220 mail.example ESMTP", not an SSH greeting, then nothing more within 300ms of the connection: is it an SSH server (fgtop serve)?`},
		{"the caller's time", time.Minute, 300 * time.Millisecond,
			`the time given (--timeout) ran out during the SSH handshake (the node had sent "220 mail.example ESMTP", not an SSH greeting: is it an SSH server (fgtop serve)?)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), c.ctx)
			defer cancel()
			_, err := SnapshotAtSSH(ctx, ln.Addr().String(), cfg, SSHOptions{DialTimeout: c.dial}, time.Now())
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

// TestAnswerCutByTimeout: a node that begins its answer to `history` or
// `snapshot --at` and then sends nothing more is said to have run out the
// time given, with how far it got, not "no answer: context deadline
// exceeded".
func TestAnswerCutByTimeout(t *testing.T) {
	const begun = `{"schema":"fgtop.history/v1","intervals":[`
	addr, _ := sshtest.ExecPeer(t, func(ch gossh.Channel) {
		_, _ = io.WriteString(ch, begun)
		_, _ = io.Copy(io.Discard, ch) // until the client goes
	})
	cfg := &gossh.ClientConfig{User: "t", Auth: []gossh.AuthMethod{gossh.PublicKeys(sshtest.NewKey(t).Signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()} //nolint:gosec // a test node on loopback
	q, err := NewHistoryQuery("cuda:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	fh, err := HistoryHosts(ctx, []string{addr}, cfg, SSHOptions{DialTimeout: 5 * time.Second}, q)
	want := fmt.Sprintf("the time given (--timeout) ran out before the answer ended (the node had sent %d bytes of it, then nothing more)", len(begun))
	if err != nil || len(fh.Problems) != 1 || fh.Problems[0].Error != want {
		t.Errorf("history: %+v %v\nwant the problem %s", fh, err, want)
	}
}

// TestDialNoSuchHost: a host name that does not resolve is said in
// fgtop's words, with the known_hosts name it likely misspells, or the
// names known_hosts has (not its addresses or hashes).
func TestDialNoSuchHost(t *testing.T) {
	kh := filepath.Join(t.TempDir(), "known_hosts")
	const key = " ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMU7sY\n"
	if err := os.WriteFile(kh, []byte("node01,10.0.0.1"+key+"[node02]:2222"+key+"|1|abc=|def="+key+"[127.0.0.1]:2122"+key), 0o600); err != nil {
		t.Fatal(err)
	}
	notFound := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nodee02", IsNotFound: true}}
	for _, c := range []struct {
		name  string
		files []string
		err   error
		want  string
	}{
		{"a typo", []string{kh}, notFound, "no such host nodee02 (the name does not resolve); did you mean node02? (a host in known_hosts)"},
		{"nothing close", []string{kh}, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "gpu-rack-7", IsNotFound: true}},
			"no such host gpu-rack-7 (the name does not resolve): check the name in --hosts (known_hosts has node01, node02)"},
		{"no known_hosts names", nil, notFound, "no such host nodee02 (the name does not resolve): check the name in --hosts"},
	} {
		if got := dialErr(c.err, c.files).Error(); got != c.want {
			t.Errorf("%s: %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestHistoryNodeUsageErrorIsAProblem: a node that exits 2 with a name
// refusal in model/names' words does not know the name (NotFound); one
// that exits 2 with any other words (a flag a node of another version
// does not know) is a node that did not answer the query (Problems), not
// one where the name is not.
func TestHistoryNodeUsageErrorIsAProblem(t *testing.T) {
	peer := func(words string) string {
		addr, _ := sshtest.ExecPeer(t, func(ch gossh.Channel) {
			_, _ = ch.Stderr().Write([]byte(words + "\n"))
			_, _ = ch.SendRequest("exit-status", false, gossh.Marshal(struct{ Status uint32 }{2}))
			_ = ch.Close()
		})
		return addr
	}
	notHere := peer(`fgtop: no kernel "k9" in the record, which knows k1, k2`)
	older := peer(`fgtop: unknown flag: --until`)
	cfg := &gossh.ClientConfig{User: "t", Auth: []gossh.AuthMethod{gossh.PublicKeys(sshtest.NewKey(t).Signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()} //nolint:gosec // test nodes on loopback
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q, err := NewHistoryQuery("", "k9", "")
	if err != nil {
		t.Fatal(err)
	}
	fh, err := HistoryHosts(ctx, []string{notHere, older}, cfg, SSHOptions{}, q)
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	if len(fh.NotFound) != 1 || fh.NotFound[0].Node != notHere {
		t.Errorf("not found %+v, want only %s", fh.NotFound, notHere)
	}
	if len(fh.Problems) != 1 || fh.Problems[0].Node != older || !strings.Contains(fh.Problems[0].Error, "unknown flag: --until") {
		t.Errorf("problems %+v, want %s with its words", fh.Problems, older)
	}
}

// TestStreamNotSnapshots: a node whose stream is not fgtop's snapshot
// lines (another program answering the exec, a broken node) is named by
// what it sent, in fgtop's words, not "bad line from the node: not JSON:
// invalid character"; one past the line limit says it in MiB.
func TestStreamNotSnapshots(t *testing.T) {
	for _, c := range []struct {
		name, sent, want string
	}{
		{"not JSON", "Welcome to node01! Last login: yesterday from 10.0.0.1\n", `the node sent a line that is not an fgtop snapshot ("Welcome to node01! Last login: yesterday"…)`},
		{"an escape", "\x1b]52;c;aGk=\x07\n", `not an fgtop snapshot ("\x1b]52;c;aGk=\a")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, _ := sshtest.ExecPeer(t, func(ch gossh.Channel) {
				_, _ = ch.Write([]byte(c.sent))
				time.Sleep(100 * time.Millisecond)
				_ = ch.Close()
			})
			if err := streamFrom(t, addr); err == nil || !strings.Contains(err.Error(), c.want) || strings.ContainsRune(err.Error(), 0x1b) {
				t.Fatalf("%v\nwant %q", err, c.want)
			}
		})
	}
}

// streamFrom reads the snapshot stream of the test node at addr once, as
// the fleet does, and returns how it ended.
func streamFrom(t *testing.T, addr string) error {
	t.Helper()
	cfg := &gossh.ClientConfig{User: "t", Auth: []gossh.AuthMethod{gossh.PublicKeys(sshtest.NewKey(t).Signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()} //nolint:gosec // a test node on loopback
	tr := NewTracker([]string{addr}, "ssh", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := streamOnce(ctx, tr, addr, cfg, SSHOptions{}.withDefaults())
	return err
}
