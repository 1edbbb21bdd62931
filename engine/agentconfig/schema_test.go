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
