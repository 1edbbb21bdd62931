package fleet

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestAnswerWrite(t *testing.T) {
	a := NewAnswer(&Fleet{Nodes: []Node{{Addr: "n1:2222", State: Unreachable, Reason: "refused"}}}, false, nil, "", Settings{})
	for _, c := range []struct {
		name           string
		asJSON, indent bool
		check          func(string) bool
	}{
		{"text", false, true, func(s string) bool { return strings.Contains(s, "n1:2222") && !strings.HasPrefix(s, "{") }},
		{"json", true, true, func(s string) bool { return strings.HasPrefix(s, "{\n") && json.Valid([]byte(s)) }},
		{"compact json", true, false, func(s string) bool { return strings.Count(s, "\n") == 1 && json.Valid([]byte(s)) }},
	} {
		var b bytes.Buffer
		if err := a.Write(&b, c.asJSON, c.indent, func(s string) string { return s }); err != nil || !c.check(b.String()) {
			t.Errorf("%s: %v\n%s", c.name, err, b.String())
		}
	}
}

func TestParseAt(t *testing.T) {
	now := time.Date(2026, 11, 27, 14, 2, 0, 0, time.Local)
	for _, c := range []struct {
		text string
		want time.Time
		err  string
	}{
		{"-2h", now.Add(-2 * time.Hour), ""},
		{"2099-01-01T00:00:00Z", time.Time{}, "--at 2099-01-01T00:00:00Z is in the future"},
		{"whenever", time.Time{}, "--at: "},
	} {
		at, err := ParseAt(c.text, now)
		switch {
		case c.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.text, err, c.err)
			}
		case err != nil || !at.Equal(c.want):
			t.Errorf("%s: %s %v, want %s", c.text, at, err, c.want)
		}
	}
}
