// Package promtest runs the real Prometheus tools in tests: promtool to
// check an exposition, and a prometheus server, started as a plain process
// on 127.0.0.1 with a temporary config and storage, that scrapes the
// exporters a test starts and answers queries through client_golang's
// api/prometheus/v1.
//
// The tools come from Debian's prometheus package (.ci/run installs it).
// Where they are missing, tests skip with a message saying so, unless
// FGTOP_REQUIRE_PROMETHEUS=1 (CI), which makes that a failure.
package promtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	pmodel "github.com/prometheus/common/model"
)

// RequireEnv names the variable that turns a missing tool into a failure.
const RequireEnv = "FGTOP_REQUIRE_PROMETHEUS"

// Prometheus returns the prometheus binary, or skips the test (fails it
// with FGTOP_REQUIRE_PROMETHEUS=1).
func Prometheus(t testing.TB) string {
	t.Helper()
	return tool(t, "prometheus", "prometheus", RequireEnv)
}

// Promtool returns the promtool binary, or skips the test (fails it with
// FGTOP_REQUIRE_PROMETHEUS=1).
func Promtool(t testing.TB) string { t.Helper(); return tool(t, "promtool", "prometheus", RequireEnv) }

// CheckMetrics runs `promtool check metrics` on an exposition and returns
// what it printed; err is set when promtool found a problem (or could not
// run).
func CheckMetrics(t testing.TB, exposition []byte) (string, error) {
	t.Helper()
	cmd := exec.Command(Promtool(t), "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Target is one endpoint to scrape, with extra target labels.
type Target struct {
	// Addr is HOST:PORT of a /metrics endpoint.
	Addr   string
	Labels map[string]string
	// Interval is how often it is scraped (0: ScrapeInterval); a target
	// with its own is in a job of its own ("fgtop_every_3s").
	Interval time.Duration
}

// Server is a running prometheus.
type Server struct {
	// URL is its base URL ("http://127.0.0.1:PORT"), what fgtop fleet
	// --prometheus and api.Client take.
	URL     string
	Dir     string
	targets []Target
	api     v1.API
	server
}

// ScrapeInterval is how often the test server scrapes its targets.
const ScrapeInterval = time.Second

// Start runs prometheus scraping targets every ScrapeInterval (job
// "fgtop"), with a temporary config and storage, on a free port of
// 127.0.0.1. The process is killed when the test ends.
func Start(t testing.TB, targets []Target) *Server {
	t.Helper()
	return StartWith(t, targets, Options{})
}

// Options are StartWith's extras.
type Options struct {
	// RemoteWrite is a remote_write URL every sample is sent to as well
	// (a VictoriaMetrics' http://HOST:PORT/api/v1/write), "" for none.
	RemoteWrite string
	// RuleFiles are recording rule files Prometheus evaluates every
	// ScrapeInterval.
	RuleFiles []string
}

// StartWith is Start with extras.
func StartWith(t testing.TB, targets []Target, o Options) *Server {
	t.Helper()
	bin := Prometheus(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	text := config(targets)
	if len(o.RuleFiles) > 0 {
		text += "rule_files:\n"
		for _, f := range o.RuleFiles {
			text += fmt.Sprintf("  - %q\n", f)
		}
	}
	if o.RemoteWrite != "" {
		// Sent within a fraction of a second, so a test need not wait for
		// the default batching.
		text += fmt.Sprintf("remote_write:\n  - url: %q\n    queue_config:\n      batch_send_deadline: 100ms\n", o.RemoteWrite)
	}
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, "prometheus", bin, dir, func(port int) []string {
		return []string{
			"--config.file=" + cfg,
			"--storage.tsdb.path=" + filepath.Join(dir, "data"),
			"--web.listen-address=127.0.0.1:" + strconv.Itoa(port),
			"--storage.tsdb.retention.time=1h",
			"--log.level=warn"}
	}, "/-/ready")
	client, err := api.NewClient(api.Config{Address: srv.url})
	if err != nil {
		t.Fatal(err)
	}
	return &Server{URL: srv.url, Dir: dir, targets: targets, api: v1.NewAPI(client), server: srv}
}

// config is a prometheus.yml scraping targets.
func config(targets []Target) string {
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\n", ScrapeInterval, ScrapeInterval, ScrapeInterval)
	b.WriteString("scrape_configs:\n  - job_name: fgtop\n    static_configs:\n")
	var others []time.Duration
	for _, tg := range targets {
		if tg.Interval > 0 && tg.Interval != ScrapeInterval {
			if !slices.Contains(others, tg.Interval) {
				others = append(others, tg.Interval)
			}
			continue
		}
		staticConfig(&b, tg)
	}
	for _, iv := range others {
		fmt.Fprintf(&b, "  - job_name: fgtop_every_%s\n    scrape_interval: %s\n    scrape_timeout: %s\n    static_configs:\n", iv, iv, ScrapeInterval)
		for _, tg := range targets {
			if tg.Interval == iv {
				staticConfig(&b, tg)
			}
		}
	}
	return b.String()
}

// staticConfig writes one target of a job's static_configs.
func staticConfig(b *strings.Builder, tg Target) {
	fmt.Fprintf(b, "      - targets: [%q]\n", tg.Addr)
	if len(tg.Labels) > 0 {
		b.WriteString("        labels:\n")
		for k, v := range tg.Labels {
			fmt.Fprintf(b, "          %s: %q\n", k, v)
		}
	}
}

// API returns a client of the server's HTTP API.
func (s *Server) API() v1.API { return s.api }

// WaitUp waits until every target has been scraped successfully (up ==
// 1), or fails the test when ctx ends first.
func (s *Server) WaitUp(t testing.TB, ctx context.Context) {
	t.Helper()
	s.WaitQuery(t, ctx, `sum(up{job=~"fgtop.*"})`, func(v pmodel.Vector) bool {
		return len(v) == 1 && int(v[0].Value) == len(s.targets)
	})
}

// WaitQuery runs query every 100 ms until ok accepts the result, and
// returns that result; it fails the test when ctx ends first.
func (s *Server) WaitQuery(t testing.TB, ctx context.Context, query string, ok func(pmodel.Vector) bool) pmodel.Vector {
	t.Helper()
	var last pmodel.Value
	var lastErr error
	for {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		v, _, _, err := s.api.Query(qctx, query, time.Now())
		cancel()
		last, lastErr = v, err
		if err == nil {
			if vec, isVec := v.(pmodel.Vector); isVec && ok(vec) {
				return vec
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("query %s: still not as wanted when the time ran out: last %v (err %v)\nprometheus log:\n%s", query, last, lastErr, s.Logs())
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}
