package metrics

import (
	"fmt"
	"html"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry returns a registry with the collector and the usual process and
// Go runtime collectors of an exporter.
func Registry(c *Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector())
	return reg
}

// maxConcurrentScrapes bounds scrapes served at once: each one walks the
// snapshot; more than a few at a time is a misconfiguration, not load.
const maxConcurrentScrapes = 4

// Handler serves GET /metrics from the registry and a small index page at
// /; every other path is 404 and every other method 405.
func Handler(reg *prometheus.Registry) http.Handler {
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: maxConcurrentScrapes,
		EnableOpenMetrics:   true,
	})
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html>\n<html><head><title>fgtop exporter</title></head><body>\n"+
			"<h1>fgtop exporter</h1>\n<p><a href=\"%s\">metrics</a></p>\n</body></html>\n", html.EscapeString("metrics"))
	})
	return mux
}
