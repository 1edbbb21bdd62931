package promtest

import (
	"path/filepath"
	"strconv"
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
	return tool(t, "victoria-metrics", "victoria-metrics", RequireVictoriaEnv)
}

// Victoria is a running single-node VictoriaMetrics.
type Victoria struct {
	// URL is its base URL, which serves Prometheus's query API.
	URL string
	Dir string
	server
}

// WriteURL is where Prometheus's remote_write sends samples.
func (v *Victoria) WriteURL() string { return v.URL + "/api/v1/write" }

// StartVictoria runs victoria-metrics as a plain process on a free port of
// 127.0.0.1 with a temporary data dir, its response cache off (a test
// queries moments just written) and VictoriaLatencyOffset. The process is
// killed when the test ends.
func StartVictoria(t testing.TB) *Victoria {
	t.Helper()
	bin := VictoriaMetrics(t)
	dir := t.TempDir()
	srv := startServer(t, "victoria-metrics", bin, dir, func(port int) []string {
		return []string{
			"-httpListenAddr=127.0.0.1:" + strconv.Itoa(port),
			"-storageDataPath=" + filepath.Join(dir, "data"),
			"-retentionPeriod=1d",
			"-search.disableCache",
			"-search.latencyOffset=" + VictoriaLatencyOffset.String(),
			"-loggerLevel=WARN"}
	}, "/health")
	return &Victoria{URL: srv.url, Dir: dir, server: srv}
}
