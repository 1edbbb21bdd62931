package promtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// FakeTarget is a /metrics endpoint on 127.0.0.1 serving a text
// exposition the test sets, or failing with 503 while it is "" (its
// target down, at the same address, until Set gives it a body again): a
// stand-in for an fgtop exporter, such as one before its first snapshot,
// which serves fgtop_build_info alone. Closed when the test ends.
type FakeTarget struct {
	// Addr is its HOST:PORT, for Target.
	Addr string

	mu   sync.Mutex
	body string
}

// NewFakeTarget starts a fake target serving body.
func NewFakeTarget(t testing.TB, body string) *FakeTarget {
	t.Helper()
	f := &FakeTarget{body: body}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		body := f.body
		f.mu.Unlock()
		if body == "" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	f.Addr = strings.TrimPrefix(srv.URL, "http://")
	return f
}

// Set changes what the target serves ("": down).
func (f *FakeTarget) Set(body string) {
	f.mu.Lock()
	f.body = body
	f.mu.Unlock()
}

// BuildInfo is the fgtop_build_info line of node: all an exporter serves
// before its first snapshot.
func BuildInfo(node string) string {
	return fmt.Sprintf("# TYPE fgtop_build_info gauge\nfgtop_build_info{node=%q,version=\"test\",revision=\"\",goversion=\"go\"} 1\n", node)
}

// Snapshot is node's fgtop_build_info and fgtop_snapshot_sequence: the
// least of an exporter that has published snapshot seq.
func Snapshot(node string, seq int) string {
	return BuildInfo(node) + fmt.Sprintf("# TYPE fgtop_snapshot_sequence gauge\nfgtop_snapshot_sequence{node=%q} %d\n", node, seq)
}
