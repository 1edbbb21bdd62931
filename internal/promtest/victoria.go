package promtest

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RequireVictoriaEnv names the variable that turns a missing
// victoria-metrics binary into a failure.
const RequireVictoriaEnv = "FGTOP_REQUIRE_VICTORIAMETRICS"

// VictoriaLatencyOffset is the test store's -search.latencyOffset: by
// default VictoriaMetrics hides the newest 30 s of data from queries.
const VictoriaLatencyOffset = time.Second

// VictoriaMetrics returns the victoria-metrics binary, or skips the test
// (fails it with FGTOP_REQUIRE_VICTORIAMETRICS=1).
func VictoriaMetrics(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("victoria-metrics")
	if err == nil {
		return p
	}
	msg := "victoria-metrics is not on PATH: install Debian's victoria-metrics package (apt-get install --no-install-recommends victoria-metrics; .ci/run does)"
	if os.Getenv(RequireVictoriaEnv) == "1" {
		t.Fatalf("%s, and %s=1 requires it", msg, RequireVictoriaEnv)
	}
	t.Skipf("%s; set %s=1 to make this a failure", msg, RequireVictoriaEnv)
	return ""
}

// Victoria is a running single-node VictoriaMetrics.
type Victoria struct {
	// URL is its base URL, which serves Prometheus's query API.
	URL     string
	Dir     string
	logPath string
}

// WriteURL is where Prometheus's remote_write sends samples.
func (v *Victoria) WriteURL() string { return v.URL + "/api/v1/write" }

// Logs returns the end of what victoria-metrics printed so far.
func (v *Victoria) Logs() string {
	b, err := os.ReadFile(v.logPath)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	if len(b) > maxLog {
		b = b[len(b)-maxLog:]
	}
	return string(b)
}

// StartVictoria runs victoria-metrics as a plain process on a free port of
// 127.0.0.1 with a temporary data dir, its response cache off (a test
// queries moments just written) and VictoriaLatencyOffset. The process is
// killed when the test ends.
func StartVictoria(t testing.TB) *Victoria {
	t.Helper()
	bin := VictoriaMetrics(t)
	dir := t.TempDir()
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		v := &Victoria{URL: "http://127.0.0.1:" + strconv.Itoa(port), Dir: dir, logPath: filepath.Join(dir, fmt.Sprintf("vm-%d.log", attempt))}
		logf, err := os.Create(v.logPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin,
			"-httpListenAddr=127.0.0.1:"+strconv.Itoa(port),
			"-storageDataPath="+filepath.Join(dir, "data"),
			"-retentionPeriod=1d",
			"-search.disableCache",
			"-search.latencyOffset="+VictoriaLatencyOffset.String(),
			"-loggerLevel=WARN")
		cmd.Stdout, cmd.Stderr = logf, logf
		err = cmd.Start()
		logf.Close()
		if err != nil {
			t.Fatalf("start victoria-metrics: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
			if t.Failed() {
				t.Logf("victoria-metrics log:\n%s", v.Logs())
			}
		})
		if err := waitHealthy(v.URL+"/health", exited); err != nil {
			lastErr = err
			_ = cmd.Process.Kill()
			if strings.Contains(v.Logs(), "address already in use") {
				continue
			}
			t.Fatalf("victoria-metrics did not start: %v\n%s", err, v.Logs())
		}
		return v
	}
	t.Fatalf("victoria-metrics did not start: %v", lastErr)
	return nil
}

// waitHealthy polls url until it answers 200, the process exits, or
// startTimeout passes.
func waitHealthy(url string, exited <-chan error) error {
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
	return fmt.Errorf("not healthy after %s", startTimeout)
}
