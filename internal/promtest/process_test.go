package promtest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	pmodel "github.com/prometheus/common/model"
)

// TestServersStartAndStop: both servers start through the one starter,
// Prometheus scrapes a fake target and remote-writes to VictoriaMetrics,
// which then answers the same series; each answers on its own port while
// the test runs and is gone once its cleanups ran.
func TestServersStartAndStop(t *testing.T) {
	var urls []string
	t.Run("both", func(t *testing.T) {
		vm := StartVictoria(t)
		ft := NewFakeTarget(t, "# TYPE fgtop_probe gauge\nfgtop_probe 42\n")
		prom := StartWith(t, []Target{{Addr: ft.Addr, Labels: map[string]string{"node": "n1"}}}, Options{RemoteWrite: vm.WriteURL()})
		urls = []string{prom.URL, vm.URL}
		if prom.URL == vm.URL {
			t.Fatalf("both servers on %s", prom.URL)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		prom.WaitUp(t, ctx)
		// VictoriaMetrics answers Prometheus's query API: the written
		// sample reads back there, with the target's label.
		for {
			resp, err := http.Get(vm.URL + `/api/v1/query?query=fgtop_probe{node="n1"}`)
			if err == nil {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
				if strings.Contains(string(b), `"42"`) {
					break
				}
			}
			select {
			case <-ctx.Done():
				t.Fatalf("victoria-metrics never had fgtop_probe:\nprometheus:\n%s\nvictoria-metrics:\n%s", prom.Logs(), vm.Logs())
			case <-time.After(100 * time.Millisecond):
			}
		}
		v := prom.WaitQuery(t, ctx, `fgtop_probe{node="n1"}`, func(v pmodel.Vector) bool { return len(v) == 1 })
		if v[0].Value != 42 {
			t.Fatalf("prometheus has %v", v)
		}
	})
	c := &http.Client{Timeout: time.Second}
	for _, u := range urls {
		if resp, err := c.Get(u + "/health"); err == nil {
			resp.Body.Close()
			t.Errorf("%s still answers after its test ended", u)
		}
	}
}
