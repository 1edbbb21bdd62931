package replay

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDocFieldsAlwaysPresent: the fields docs/replay.md lists are in
// every --json document, zero or false too: left out, jq read them as
// null.
func TestDocFieldsAlwaysPresent(t *testing.T) {
	for _, c := range []struct {
		v    any
		want []string
	}{
		{AgentDoc{}, []string{`"refused_though_ran":0`, `"absent":false`}},
		{RefusalDoc{}, []string{`"running_at_start":false`}},
		{newDoc(&Record{}, &Result{}, nil, false), []string{`"notes":[]`}},
	} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%T: %s lacks %s", c.v, b, w)
			}
		}
	}
}
