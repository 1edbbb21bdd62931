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
	"github.com/fgtop/fgtop/internal/hostile"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// checkSafe fails t when a string of m, its kernels and holdings
// included, is not as untrusted.Text leaves it.
func checkSafe(t *testing.T, m *model.Snapshot) {
	t.Helper()
	bad := func(s string) string {
		if !untrusted.Safe(s) {
			t.Errorf("raw control text reached the model: %q", s)
		}
		return s
	}
	untrusted.Apply(m, bad)
	for _, k := range m.Kernels() {
		untrusted.Apply(k, bad)
	}
	for _, u := range m.Usage {
		hs := u.Holdings()
		untrusted.Apply(&hs, bad)
	}
}

// TestHostilePeer: a peer's snapshot with escape sequences in every
// string comes out of ParseLine and Model with every one of them escaped,
// and its kernel ids, no longer UUIDs, each raise a bad-id issue.
func TestHostilePeer(t *testing.T) {
	n, err := demo.Start(context.Background(), demo.Options{Seed: 3, Speed: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	n.Pause()
	s, err := engine.Build(context.Background(), n.EngineOptions())
	_ = n.Close()
	if err != nil {
		t.Fatal(err)
	}
	line, err := report.Marshal(report.FromSnapshot(hostile.Snapshot(s)), false)
	if err != nil {
		t.Fatal(err)
	}
	doc, _, err := report.ParseLine(line)
	if err != nil {
		t.Fatal(err)
	}
	m, err := doc.Model()
	if err != nil {
		t.Fatal(err)
	}
	checkSafe(t, m)
	if !strings.Contains(m.Node, `\x1b]52;c;`) {
		t.Fatalf("node name %q: the payload was not kept, escaped", m.Node)
	}
	bad := 0
	for _, i := range m.Issues {
		if i.Code == model.IssueBadID {
			bad++
		}
	}
	if bad == 0 || bad != m.NumKernels() {
		t.Fatalf("%d bad-id issues for %d kernels with planted ids", bad, m.NumKernels())
	}
	for i := 1; i < len(m.Issues); i++ {
		if m.Issues[i].Severity > m.Issues[i-1].Severity {
			t.Fatal("issues no longer sorted by severity")
		}
	}
}

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
		// Amounts Backend.AI never writes are refused as NaN is: taken, a
		// held of -5.00 showed -3.50/4.00 and 7.70 free in the fleet.
		{"negative held", `{"schema":"fgtop.snapshot/v1","devices":[{"key":"cuda:0","plugin":"cuda","id":"0","capacity":"4.00","held":{"cuda.shares":"-5.00"},"kernels":1}]}`, false, `device cuda:0: held cuda.shares: "-5.00" is negative`},
		{"negative capacity", `{"schema":"fgtop.snapshot/v1","devices":[{"key":"cuda:0","plugin":"cuda","id":"0","capacity":"-1.00"}]}`, false, "device cuda:0: capacity -1.00 is negative"},
		{"negative held on an unknown device", `{"schema":"fgtop.snapshot/v1","unknown_devices":[{"key":"cuda:9","held":{"cuda.shares":"-1"}}]}`, false, `device cuda:9: held cuda.shares: "-1" is negative`},
		{"negative allocation", `{"schema":"fgtop.snapshot/v1","kernels":[{"id":"k","agent":"a","state":"ok","slots":{},"allocations":{"cuda.shares":{"0":"-0.5"}}}]}`, false, `kernel k: cuda.shares on 0: "-0.5" is negative`},
		{"negative agent held", `{"schema":"fgtop.snapshot/v1","agents":[{"id":"a","held":{"cuda.shares":"-2"},"owns":{}}]}`, false, `agent a: held cuda.shares: "-2" is negative`},
		{"negative use", `{"schema":"fgtop.snapshot/v1","kernels":[{"id":"k","agent":"a","state":"ok","slots":{},"allocations":{},"use":{"procs":0,"idle":false,"devices":[{"device":"cuda:0","held":"-1","capacity":"1","procs":0}]}}]}`, false, "device cuda:0: held and capacity must not be negative"},
		// A kernel's slots are its resource.txt's as written: a node
		// publishes a negative one (and flags the kernel), so it is shown.
		{"negative kernel slots", `{"schema":"fgtop.snapshot/v1","kernels":[{"id":"k","agent":"a","state":"ok","slots":{"cpu":"-4"},"allocations":{}}]}`, false, ""},
		{"NaN kernel slots", `{"schema":"fgtop.snapshot/v1","kernels":[{"id":"k","agent":"a","state":"ok","slots":{"cpu":"NaN","mem":"Infinity"},"allocations":{}}]}`, false, ""},
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
	f.Add([]byte("{\"schema\":\"fgtop.snapshot/v1\",\"node\":\"n\u001b]52;c;eA==\u0007\u009b\",\"kernels\":[{\"id\":\"k\\nrm\",\"state\":\"ok\",\"slots\":{\"x\u001b\":\"1\"}}]}"))
	f.Fuzz(func(t *testing.T, line []byte) {
		doc, _, err := report.ParseLine(line)
		if err == nil && doc != nil {
			_, err = doc.Model()
		}
		if err != nil {
			if !untrusted.Safe(err.Error()) {
				t.Fatalf("error carries raw control text: %q", err.Error())
			}
			return
		}
		if doc == nil {
			return
		}
		m, err := doc.Model()
		if err != nil {
			t.Fatal(err)
		}
		checkSafe(t, m)
		if _, err := report.Marshal(report.FromSnapshot(m), false); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBadIDs: a peer's kernel whose own id is a UUID but whose record's
// session id is not gets a bad-id issue naming the field; one whose ids
// are all UUIDs gets none.
func TestBadIDs(t *testing.T) {
	line := `{"schema":"fgtop.snapshot/v1","node":"n","kernels":[` +
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","state":"ok","session_id":"s\u001b[31m","owner_user_id":"35e02027-c5ba-4d6c-9708-7623f41044c1"},` +
		`{"id":"7296d7bf-65e2-468d-ab9a-f6429994bc7c","state":"ok","session_id":"0b59124e-5b63-4596-990a-af5bee51230b"}]}`
	doc, _, err := report.ParseLine([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	m, err := doc.Model()
	if err != nil {
		t.Fatal(err)
	}
	var bad []model.Issue
	for _, i := range m.Issues {
		if i.Code == model.IssueBadID {
			bad = append(bad, i)
		}
	}
	if len(bad) != 1 || bad[0].Kernel != "21e330bf-e15a-47a9-9183-df27ccd257b6" ||
		bad[0].Message != `session_id "s\x1b[31m" not a UUID, as Backend.AI makes them` {
		t.Fatalf("bad-id issues: %+v", bad)
	}
}
