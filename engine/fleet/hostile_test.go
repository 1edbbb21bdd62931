package fleet

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/internal/hostile"
	"github.com/fgtop/fgtop/internal/untrusted"
)

// TestPromHostile: a Prometheus whose labels carry escape sequences in
// every field gives nodes whose every string is escaped; one whose error
// bodies do gives an error that quotes them escaped.
func TestPromHostile(t *testing.T) {
	srv := httptest.NewServer(hostile.Prometheus("gpu-07", false))
	defer srv.Close()
	c := newTestPromClient(t, srv.URL)
	nodes, err := c.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) == 0 {
		t.Fatal("the fake Prometheus gave no node: the test proves nothing")
	}
	check := func(s string) string {
		if !untrusted.Safe(s) {
			t.Errorf("raw label text entered: %q", s)
		}
		return s
	}
	sawDevice := false
	for i := range nodes {
		untrusted.Apply(&nodes[i], check)
		if !strings.HasPrefix(nodes[i].Name, `gpu-07\x1b]52;c;`) {
			t.Errorf("node name %q", nodes[i].Name)
		}
		if s := nodes[i].Snap; s != nil && len(s.Devices) > 0 {
			sawDevice = true
		}
	}
	if !sawDevice {
		t.Error("no device was rebuilt from the hostile labels")
	}

	bad := httptest.NewServer(hostile.Prometheus("gpu-07", true))
	defer bad.Close()
	_, err = newTestPromClient(t, bad.URL).Refresh(context.Background())
	if err == nil || !strings.Contains(err.Error(), "boom") || !untrusted.Safe(err.Error()) {
		t.Fatalf("error %q: want the body quoted escaped", err)
	}
}

// TestPromAnswerWithoutData: a server that answers every query
// {"status":"success"} (no data) or {} is refused with an error saying so;
// it crashed the fleet (a nil value's Type()).
func TestPromAnswerWithoutData(t *testing.T) {
	for _, body := range []string{`{"status":"success"}`, `{}`, `{"status":"success","data":null}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}))
		nodes, err := newTestPromClient(t, srv.URL).Refresh(context.Background())
		srv.Close()
		if err == nil || len(nodes) != 0 {
			t.Errorf("%s: nodes %v, error %v: want an error", body, nodes, err)
			continue
		}
		if !strings.Contains(err.Error(), "without data") && !strings.Contains(err.Error(), "want a vector") {
			t.Errorf("%s: error %q", body, err)
		}
	}
}

// TestPromNotTheQueryAPI: a --prometheus that answers garbage, a proxy's
// HTML error page or JSON of another shape is named, with what it
// answered and what to check, not in the client library's words
// ("bad_response: invalid character", "server_error: server error: 502").
func TestPromNotTheQueryAPI(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"garbage", http.StatusOK, "\x00\xffnot json {{{",
			"answered query fgtop_build_info with what Prometheus's query API does not send (invalid character"},
		{"proxy page", http.StatusBadGateway, "<html><body>502 Bad Gateway</body></html>\n<p>nginx</p>",
			`answered query fgtop_build_info with HTTP 502 ("<html><body>502 Bad Gateway</body></html>"), not Prometheus's answer: is Prometheus (or VictoriaMetrics) there healthy`},
		{"another shape", http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":"oops"}}`,
			"answered query fgtop_build_info with what Prometheus's query API does not send ("},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			defer srv.Close()
			c2 := newTestPromClient(t, srv.URL)
			_, err := c2.queryAll(context.Background(), []string{"fgtop_build_info"}, time.Time{})
			if err == nil || !strings.HasPrefix(err.Error(), srv.URL+" "+c.want) || !untrusted.Safe(err.Error()) {
				t.Errorf("got %v\nwant %s %s...", err, srv.URL, c.want)
			}
		})
	}
}
