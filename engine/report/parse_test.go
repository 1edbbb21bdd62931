package report_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/report"
)

// TestModelRoundTrip: a demo node's snapshot, printed, parsed back and
// printed again, is the same document; the rebuilt holdings sum to the
// published totals.
func TestModelRoundTrip(t *testing.T) {
	for _, seed := range []int64{1, 7} {
		n, err := demo.Start(context.Background(), demo.Options{Seed: seed, Speed: 1, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		n.Pause()
		s, err := engine.Build(context.Background(), n.EngineOptions())
		if err != nil {
			t.Fatal(err)
		}
		_ = n.Close()
		want, err := report.Marshal(report.FromSnapshot(s), false)
		if err != nil {
			t.Fatal(err)
		}
		doc, hb, err := report.ParseLine(want)
		if err != nil || hb != nil {
			t.Fatalf("parse: %v (heartbeat %v)", err, hb)
		}
		m, err := doc.Model()
		if err != nil {
			t.Fatal(err)
		}
		got, err := report.Marshal(report.FromSnapshot(m), false)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d: round trip differs:\n got %s\nwant %s", seed, got, want)
		}
		if len(s.Kernels()) == 0 {
			t.Fatalf("seed %d: the demo node has no kernels: the test proves nothing", seed)
		}
		for k, u := range m.Usage {
			if !m.Device(k).IsAccelerator() {
				continue
			}
			sum := s.Usage[k].Total()
			got := u.Total()
			hs := u.Holdings()
			if len(hs) != s.Usage[k].NumHoldings() {
				t.Errorf("%s: %d holdings rebuilt, %d published", k, len(hs), s.Usage[k].NumHoldings())
			}
			if !got.Equal(sum) {
				t.Errorf("%s: total %s, want %s", k, got, sum)
			}
		}
	}
}

func TestParseLine(t *testing.T) {
	f := report.Follower{}
	hb, _ := f.Heartbeat(time.Unix(0, 0))
	cases := []struct {
		name, line string
		hb         bool
		err        string
	}{
		{"heartbeat", string(hb), true, ""},
		{"empty", "  ", false, "empty line"},
		{"not json", "{", false, "not JSON"},
		{"other schema", `{"schema":"x/v9"}`, false, "schema"},
		{"bad decimal", `{"schema":"fgtop.snapshot/v1","devices":[{"key":"cuda:0","plugin":"cuda","id":"0","capacity":"1","held":{"cuda.shares":"x"}}]}`, false, "not a decimal"},
		{"bad capacity", `{"schema":"fgtop.snapshot/v1","devices":[{"key":"cuda:0","plugin":"cuda","id":"0","capacity":"NaN"}]}`, false, "capacity"},
		{"minimal", `{"schema":"fgtop.snapshot/v1","node":"n1"}`, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, h, err := report.ParseLine([]byte(c.line))
			if err == nil && doc != nil {
				_, err = doc.Model()
			}
			switch {
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("err %v, want %q", err, c.err)
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.hb != (h != nil):
				t.Fatalf("heartbeat %v, want %v", h != nil, c.hb)
			}
		})
	}
}

// FuzzParseLine: a snapshot line from the network never crashes the
// reader, and what it accepts prints again.
func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"heartbeat":true,"time":"2026-01-01T00:00:00Z","seq":3}`))
	f.Add([]byte(`{"schema":"fgtop.snapshot/v1","node":"n","devices":[{"key":"cuda:0","plugin":"cuda","id":"0","slot":"cuda.shares","capacity":"1.0","held":{"cuda.shares":"0.5"},"kernels":1}],"kernels":[{"id":"k","agent":"a","state":"ok","slots":{},"allocations":{"cuda.shares":{"0":"0.5"}}}],"agents":[{"id":"a","held":{},"owns":{"cuda":["0"]}}],"issues":[{"severity":"warning","code":"x","message":"m","device":"cuda:0"}],"unknown_devices":[{"key":"cuda:9","held":{"cuda.shares":"1"}}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		doc, _, err := report.ParseLine(line)
		if err != nil || doc == nil {
			return
		}
		m, err := doc.Model()
		if err != nil {
			return
		}
		if _, err := report.Marshal(report.FromSnapshot(m), false); err != nil {
			t.Fatal(err)
		}
	})
}
