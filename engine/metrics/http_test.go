package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fgtop/fgtop/model"
)

func get(t *testing.T, h http.Handler, path string) []byte {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", path, resp.Status, b)
	}
	return b
}

// TestHandlerRoutes: GET /metrics and the index page; nothing else.
func TestHandlerRoutes(t *testing.T) {
	snap := &model.Snapshot{Seq: 1, Node: "n"}
	srv := httptest.NewServer(Handler(Registry(New(Options{Latest: fixed(snap)}))))
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		code         int
		contains     string
	}{
		{"GET", "/metrics", 200, "fgtop_build_info"},
		{"GET", "/", 200, `href="metrics"`},
		{"HEAD", "/metrics", 200, ""},
		{"POST", "/metrics", 405, ""},
		{"DELETE", "/", 405, ""},
		{"GET", "/debug/pprof/", 404, ""},
		{"GET", "/metrics/extra", 404, ""},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.contains) {
			t.Errorf("%s %s: %d %.200q; want %d containing %q", tc.method, tc.path, resp.StatusCode, b, tc.code, tc.contains)
		}
	}
}

// blockingCollector holds every scrape until release is closed, counting
// the scrapes that reached it.
type blockingCollector struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingCollector) Describe(ch chan<- *prometheus.Desc) {}

func (b *blockingCollector) Collect(ch chan<- prometheus.Metric) {
	b.entered <- struct{}{}
	<-b.release
}

// TestScrapesAtOnceAreBounded: with maxConcurrentScrapes scrapes held
// inside the collector, one more is answered 503 at once (not queued
// behind them), and once they finish a scrape is served again
// (docs/limits.md, docs/exporter.md).
func TestScrapesAtOnceAreBounded(t *testing.T) {
	b := &blockingCollector{entered: make(chan struct{}, maxConcurrentScrapes+1), release: make(chan struct{})}
	reg := prometheus.NewRegistry()
	reg.MustRegister(b)
	srv := httptest.NewServer(Handler(reg))
	defer srv.Close()
	var once sync.Once
	release := func() { once.Do(func() { close(b.release) }) }
	defer release()
	client := &http.Client{Timeout: 5 * time.Second}
	get := func() (int, error) {
		resp, err := client.Get(srv.URL + "/metrics")
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	codes := make(chan int, maxConcurrentScrapes)
	for i := 0; i < maxConcurrentScrapes; i++ {
		go func() {
			c, err := get()
			if err != nil {
				t.Error(err)
			}
			codes <- c
		}()
	}
	for i := 0; i < maxConcurrentScrapes; i++ {
		select {
		case <-b.entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d scrapes reached the collector", i)
		}
	}
	start := time.Now()
	code, err := get()
	if err != nil {
		t.Fatalf("scrape %d at once: %v (held, not refused)", maxConcurrentScrapes+1, err)
	}
	if code != http.StatusServiceUnavailable {
		t.Fatalf("scrape %d at once: status %d, want 503", maxConcurrentScrapes+1, code)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the refused scrape took %v: it waited", d)
	}
	release()
	for i := 0; i < maxConcurrentScrapes; i++ {
		if c := <-codes; c != http.StatusOK {
			t.Errorf("a held scrape ended %d", c)
		}
	}
	if code, err := get(); err != nil || code != http.StatusOK {
		t.Fatalf("after the held ones: %d %v", code, err)
	}
}
