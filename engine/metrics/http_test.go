package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
