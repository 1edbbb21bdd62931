package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestIndentCompactMatchesJSONIndent(t *testing.T) {
	values := []any{
		map[string]any{"a": []any{}, "b": map[string]any{}, "c": []any{1, "x", nil, true, []any{[]any{}}}},
		[]any{`quote " and \ backslash`, "brace { [ , : ] }", "\u2028 <&>", "\\", "\"", "tab\tnl\n"},
		map[string]any{"k\"ey:": map[string]any{"nested": []any{map[string]any{}, map[string]any{"x": 1.5e300}}}},
		"plain", 42, nil, []any{},
	}
	for _, v := range values {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		enc = json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		got := indentCompact(nil, buf.Bytes(), "  ")
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("indent of %s:\n got %q\nwant %q", buf.Bytes(), got, want.Bytes())
		}
	}
}

func FuzzIndentCompact(f *testing.F) {
	f.Add(`{"a":[1,{"b":"c\"]"},[]],"d":{}}`)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<16 {
			return
		}
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, b, "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indentCompact(nil, b, "  "); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("indent of %s:\n got %q\nwant %q", b, got, want.Bytes())
		}
	})
}
