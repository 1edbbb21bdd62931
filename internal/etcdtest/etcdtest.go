// Package etcdtest starts a real etcd server (Debian's etcd-server, the
// etcd binary) for tests: on 127.0.0.1, ports from :0, a temporary data
// dir, stopped when the test ends. Where the binary is missing the test is
// skipped with a message, unless FGTOP_REQUIRE_ETCD=1 (CI), which fails
// it instead.
package etcdtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// RequireEnv makes a missing etcd binary a failure instead of a skip.
const RequireEnv = "FGTOP_REQUIRE_ETCD"

// Binary returns the etcd binary's path: $FGTOP_ETCD, else etcd on PATH,
// else /usr/bin/etcd.
func Binary() (string, bool) {
	if p := os.Getenv("FGTOP_ETCD"); p != "" {
		return p, true
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, true
	}
	if _, err := os.Stat("/usr/bin/etcd"); err == nil {
		return "/usr/bin/etcd", true
	}
	return "", false
}

// Server is a running etcd.
type Server struct {
	// Endpoint is the client URL's host:port, as agent.toml's [etcd] addr
	// names it.
	Endpoint string
	dataDir  string
	peer     string
	bin      string
	log      string
	cmd      *exec.Cmd
	exited   chan struct{}
	t        testing.TB
}

// Start starts an etcd for t, or skips t (fails it with
// FGTOP_REQUIRE_ETCD=1) when the binary is missing.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, ok := Binary()
	if !ok {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("etcd not found (install Debian's etcd-server; %s=1 makes this test mandatory)", RequireEnv)
		}
		t.Skipf("etcd not found: install Debian's etcd-server to run this test (%s=1 makes it mandatory)", RequireEnv)
	}
	dir := t.TempDir()
	s := &Server{
		Endpoint: "127.0.0.1:" + strconv.Itoa(freePort(t)),
		peer:     "127.0.0.1:" + strconv.Itoa(freePort(t)),
		dataDir:  filepath.Join(dir, "data"),
		log:      filepath.Join(dir, "etcd.log"),
		bin:      bin,
		t:        t,
	}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (s *Server) start() {
	t := s.t
	t.Helper()
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	client, peer := "http://"+s.Endpoint, "http://"+s.peer
	cmd := exec.Command(s.bin,
		"--name", "fgtop-test", "--data-dir", s.dataDir,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "fgtop-test="+peer, "--initial-cluster-state", "new")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start etcd: %v", err)
	}
	logf.Close()
	s.cmd, s.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := s.try(ctx, func(c *clientv3.Client) error { _, err := c.Get(ctx, "health"); return err })
		cancel()
		if err == nil {
			return
		}
		select {
		case <-s.exited:
			b, _ := os.ReadFile(s.log)
			t.Fatalf("etcd exited at start: %s", tail(b))
		default:
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(s.log)
			t.Fatalf("etcd did not answer within 20s (%v): %s", err, tail(b))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Stop stops the server (SIGTERM, then SIGKILL after 5s); the data dir
// stays for Restart. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Restart starts a stopped server again on the same ports and data.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

func (s *Server) try(ctx context.Context, f func(*clientv3.Client) error) error {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{s.Endpoint}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer c.Close()
	return f(c)
}

// Put sets key to value, failing the test on error.
func (s *Server) Put(key, value string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.try(ctx, func(c *clientv3.Client) error { _, err := c.Put(ctx, key, value); return err }); err != nil {
		s.t.Fatalf("etcd put %s: %v", key, err)
	}
}

// Delete removes key, failing the test on error.
func (s *Server) Delete(key string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.try(ctx, func(c *clientv3.Client) error { _, err := c.Delete(ctx, key); return err }); err != nil {
		s.t.Fatalf("etcd delete %s: %v", key, err)
	}
}

// String names the server for messages.
func (s *Server) String() string { return fmt.Sprintf("etcd at %s", s.Endpoint) }
