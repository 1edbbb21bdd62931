package agentconfig

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// configCase is one entry of testdata/fixtures/config-cases.json: an
// agent.toml with the verdicts of Backend.AI's own loaders.
type configCase struct {
	ID          string `json:"id"`
	Category    string `json:"category"`
	Description string `json:"description"`
	Input       string `json:"input"`
	Main        struct {
		OK     bool `json:"ok"`
		Errors []struct {
			Loc, Msg, Type string
		} `json:"errors"`
	} `json:"main"`
	PR8463 struct {
		OK bool `json:"ok"`
	} `json:"pr8463"`
	MainStartup *struct {
		OK    bool `json:"ok"`
		Error *struct {
			Type, Msg string
		} `json:"error"`
	} `json:"main_startup"`
}

func loadConfigCases(t testing.TB) []configCase {
	t.Helper()
	b, err := os.ReadFile(testfix.Dir(t, "config-cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []configCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) < 200 {
		t.Fatalf("config-cases.json has %d cases, want the 208 of the fixture", len(cs))
	}
	return cs
}

// TestJudgeConfigCases: fgtop's verdict of every fixture case is
// Backend.AI's, under main's schema and under PR #8463's.
func TestJudgeConfigCases(t *testing.T) {
	cs := loadConfigCases(t)
	agreeMain, agreeDraft := 0, 0
	for _, c := range cs {
		v := Judge([]byte(c.Input))
		if v.Main == c.Main.OK {
			agreeMain++
		} else {
			t.Errorf("%s (%s): main: fgtop says ok=%v, Backend.AI main says ok=%v %v; fgtop's reasons: %v", c.ID, c.Description, v.Main, c.Main.OK, c.Main.Errors, v.MainErrors)
		}
		if v.Draft == c.PR8463.OK {
			agreeDraft++
		} else {
			t.Errorf("%s (%s): pr8463: fgtop says ok=%v, PR #8463 says ok=%v; fgtop's reasons: %v", c.ID, c.Description, v.Draft, c.PR8463.OK, v.DraftErrors)
		}
		if !v.Main && len(v.MainErrors) == 0 {
			t.Errorf("%s: main rejects without a reason", c.ID)
		}
		for _, p := range v.MainErrors {
			if strings.TrimSpace(p.Message) == "" {
				t.Errorf("%s: empty message", c.ID)
			}
		}
	}
	t.Logf("config-cases agreeing: main %d/%d, pr8463 %d/%d", agreeMain, len(cs), agreeDraft, len(cs))
}

// FuzzJudge: the whole-file verdict never panics, is the same on every
// run over the same bytes, is the one Parse reports, and a file main loads
// always gives a Config whose start-up checks run.
func FuzzJudge(f *testing.F) {
	for _, c := range loadConfigCases(f) {
		f.Add([]byte(c.Input))
	}
	f.Add([]byte("agents = []\n[etcd]\n[agent]\nbackend = \"docker\"\n[container]\n[resource]\n"))
	f.Add([]byte("[agent]\nmode = 'dummy'\nrpc-listen-addr = \"[fe80::1]:6001\"\n[container]\nport-range = [1, \"2\"]\n[resource]\nreserved-mem = \"1.0\"\n[etcd]\naddr = [{ host = \"a\", port = 1 }, { host = \"b\", port = 2 }]\n"))
	for _, e := range []string{"x = \"\\e\"\n", "x = { a = 1, }\n", "x = {\na = 1 }\n", "x = 99999999999999999999\ny = -1e999\n", "[a]\rb = 1\r\n", "x = '''\n''''\n"} {
		f.Add([]byte(e))
	}
	devs := node(4, []string{"cuda0", "cuda1"}, 16)
	f.Fuzz(func(t *testing.T, raw []byte) {
		v := Judge(raw)
		w := Judge(raw)
		if v.Main != w.Main || v.Draft != w.Draft || len(v.MainErrors) != len(w.MainErrors) || len(v.DraftErrors) != len(w.DraftErrors) {
			t.Fatalf("verdict not stable: %+v vs %+v", v, w)
		}
		if !v.Main && len(v.MainErrors) == 0 || !v.Draft && len(v.DraftErrors) == 0 {
			t.Fatalf("a rejection without a reason: %+v", v)
		}
		c, err := Parse("agent.toml", raw)
		if c == nil {
			if v.Main || v.Draft {
				t.Fatalf("a file a loader takes does not parse: %v", err)
			}
			return
		}
		if c.Verdict == nil || c.Verdict.Main != v.Main || c.Verdict.Draft != v.Draft {
			t.Fatalf("Parse's verdict %+v, Judge's %+v", c.Verdict, v)
		}
		if (v.Main || v.Draft) && len(c.Problems) > 0 {
			t.Fatalf("a loadable file has problems: %v", c.Problems)
		}
		c.Validate(devs)
	})
}

// BenchmarkJudge is the whole-file verdict of the slot-based fixture (both
// schemas), what every Parse now adds.
func BenchmarkJudge(b *testing.B) {
	raw, err := os.ReadFile(testfix.Dir(b, "backendai", "agent.multi-agent.slot-based.toml"))
	if err != nil {
		b.Fatal(err)
	}
	defer testfix.CPUClock(b)()
	b.ReportAllocs()
	for b.Loop() {
		if v := Judge(raw); !v.Main {
			b.Fatal(v.MainErrors)
		}
	}
}
