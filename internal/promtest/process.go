package promtest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startTimeout bounds how long a server a test starts may take to answer
// ready.
const startTimeout = 20 * time.Second

// maxLog is how much of the end of a server's log Logs returns.
const maxLog = 64 << 10

// tool finds a binary of a Debian package on PATH, or skips the test;
// with requireEnv=1 (CI) its absence fails the test instead.
func tool(t testing.TB, name, pkg, requireEnv string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s is not on PATH: install Debian's %s package (apt-get install --no-install-recommends %s; .ci/run does)", name, pkg, pkg)
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s, and %s=1 requires it", msg, requireEnv)
	}
	t.Skipf("%s; set %s=1 to make this a failure", msg, requireEnv)
	return ""
}

// server is what Prometheus and VictoriaMetrics share as processes a test
// runs: their base URL and their log.
type server struct {
	url, logPath string
	stop         func()
}

// Stop kills the server now (a store that goes away mid-test), and waits
// for it to exit.
func (s server) Stop() { s.stop() }

// startServer runs bin with the arguments args gives for a port, on a
// free port of 127.0.0.1, logging into dir, until readyPath answers 200.
// A port taken between finding it and the server binding it is retried
// with another. The process is killed when the test ends, and its log
// shown when the test failed.
func startServer(t testing.TB, name, bin, dir string, args func(port int) []string, readyPath string) server {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s := server{url: "http://127.0.0.1:" + strconv.Itoa(port), logPath: filepath.Join(dir, fmt.Sprintf("%s-%d.log", name, attempt))}
		logf, err := os.Create(s.logPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, args(port)...)
		cmd.Stdout, cmd.Stderr = logf, logf
		err = cmd.Start()
		logf.Close() // the child has its own descriptor
		if err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		var once sync.Once
		s.stop = func() {
			once.Do(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
		}
		t.Cleanup(func() {
			s.stop()
			if t.Failed() {
				t.Logf("%s log:\n%s", name, s.Logs())
			}
		})
		if err := waitReady(s.url+readyPath, exited); err != nil {
			lastErr = err
			_ = cmd.Process.Kill()
			if strings.Contains(s.Logs(), "address already in use") {
				continue // the free port was taken meanwhile: another one
			}
			t.Fatalf("%s did not start: %v\n%s", name, err, s.Logs())
		}
		return s
	}
	t.Fatalf("%s did not start: %v", name, lastErr)
	return server{}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls url until it answers 200, the process exits, or
// startTimeout passes.
func waitReady(url string, exited <-chan error) error {
	deadline := time.Now().Add(startTimeout)
	c := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("exited: %v", err)
		default:
		}
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %s", startTimeout)
}

// Logs returns the end of what the server printed so far.
func (s server) Logs() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	if len(b) > maxLog {
		b = b[len(b)-maxLog:]
	}
	return string(b)
}
