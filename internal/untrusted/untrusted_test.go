package untrusted

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"gpu-07", "gpu-07"},
		{"", ""},
		{"gpu-07\x1b]52;c;aGk=\a", `gpu-07\x1b]52;c;aGk=\x07`},
		{"a\r\nb", `a\x0d\x0ab`},
		{"tab\there", `tab\x09here`},
		{"csi\u009b31m", `csi\u009b31m`},
		{"del\x7f", `del\u007f`},
		{"lone \x9b byte", `lone \x9b byte`},
		{"evil\u202egpj.exe", `evil\u202egpj.exe`},
		{"iso\u2066x\u2069", `iso\u2066x\u2069`},
		{"sep\u2028", `sep\u2028`},
		{"ünï €", "ünï €"},
		{"already \\x1b", "already \\x1b"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLinesKeepsNewlines(t *testing.T) {
	got := Lines("node a\tok\nnode \x1b[31mb\r\n")
	want := "node a\tok\nnode \\x1b[31mb\\x0d\n"
	if got != want {
		t.Fatalf("Lines = %q, want %q", got, want)
	}
}

func TestIsUUID(t *testing.T) {
	for s, want := range map[string]bool{
		"21e330bf-e15a-47a9-9183-df27ccd257b6":        true,
		"21E330BF-E15A-47A9-9183-DF27CCD257B6":        false,
		"21e330bf-e15a-47a9-9183-df27ccd257b":         false,
		"7e0a-kernel\nrm -rf ~ # 9183-df27ccd257b6aa": false,
		"21e330bfxe15a-47a9-9183-df27ccd257b6":        false,
	} {
		if IsUUID(s) != want {
			t.Errorf("IsUUID(%q) = %v", s, !want)
		}
	}
}

// foreign reports a raw ESC, BEL, other C0 but newline and tab, or a C1
// character in s.
func foreign(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			return true
		}
	}
	return !utf8.ValidString(s)
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"a\x1b]52;c;x\a", "\u009b", "\xc2", "\u202e", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Text(s)
		if strings.ContainsFunc(c, Unsafe) || !utf8.ValidString(c) {
			t.Fatalf("Text(%q) = %q still holds an unsafe character", s, c)
		}
		if Text(c) != c || !Safe(c) {
			t.Fatalf("Text is not idempotent on %q", s)
		}
		if Safe(s) != (c == s) {
			t.Fatalf("Safe(%q) disagrees with Text", s)
		}
		l := Lines(s)
		if foreign(l) || Lines(l) != l {
			t.Fatalf("Lines(%q) = %q", s, l)
		}
		// What encoding/json wrote stays valid JSON meaning the same.
		b, _ := json.Marshal(s)
		var back string
		if err := json.Unmarshal([]byte(Lines(string(b))), &back); err != nil {
			t.Fatalf("Lines broke JSON %s: %v", b, err)
		}
		var want string
		_ = json.Unmarshal(b, &want)
		if back != want {
			t.Fatalf("JSON round trip: %q, want %q", back, want)
		}
	})
}

type doc struct {
	Name  string
	ID    kid
	Tags  []string
	Sub   *doc
	Map   map[string]inner
	Arr   [2]string
	Any   any
	MM    map[kid]map[kid]string
	PM    map[string]*inner
	N     int
	inner string
}

type kid string

type inner struct{ V string }

func TestClean(t *testing.T) {
	d := doc{Name: "a\x1b", ID: "k\n", Tags: []string{"\a"}, Sub: &doc{Name: "\u009b"},
		Map: map[string]inner{"k\x1b": {"v\x1b"}, "ok": {"fine"}}, Arr: [2]string{"x", "\r"}, Any: "\x1b", N: 3, inner: "\x1b",
		MM: map[kid]map[kid]string{"s\x1b": {"d\x1b": "v\x1b"}}, PM: map[string]*inner{"p": {"\a"}}}
	Clean(&d)
	if d.Name != `a\x1b` || d.ID != `k\x0a` || d.Tags[0] != `\x07` || d.Sub.Name != `\u009b` || d.Arr[1] != `\x0d` || d.Any != `\x1b` {
		t.Fatalf("not cleaned: %+v", d)
	}
	if d.inner != "\x1b" {
		t.Fatal("an unexported field was touched")
	}
	if d.MM[`s\x1b`][`d\x1b`] != `v\x1b` || len(d.MM) != 1 || d.PM["p"].V != `\x07` {
		t.Fatalf("nested maps: %#v %#v", d.MM, d.PM["p"])
	}
	if len(d.Map) != 2 || d.Map[`k\x1b`].V != `v\x1b` || d.Map["ok"].V != "fine" {
		t.Fatalf("map: %#v", d.Map)
	}
}

func TestWriterSplitsAndJSON(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	in := "ok é\n\x1b]52;c;x\a\u009b end\n"
	for i := 0; i < len(in); i++ { // one byte at a time: runes split across writes
		if n, err := w.Write([]byte{in[i]}); n != 1 || err != nil {
			t.Fatal(n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "ok é\n\\x1b]52;c;x\\x07\\u009b end\n"
	if out.String() != want {
		t.Fatalf("wrote %q, want %q", out.String(), want)
	}
}

// TestWriterRed: fgtop's own red reaches the terminal once allowed (the
// CLI's OVERCOMMIT), while the same sequence inside outside text stays
// escaped; without AllowRed, Red is the text itself.
func TestWriterRed(t *testing.T) {
	var b bytes.Buffer
	x := NewWriter(&b)
	if got := x.Red("! OVERCOMMIT"); got != "! OVERCOMMIT" {
		t.Fatalf("Red before AllowRed: %q", got)
	}
	x.AllowRed()
	if _, err := io.WriteString(x, "gpu\x1b[31mX "+x.Red("! OVERCOMMIT")+" \x1b]0;t\a\n"); err != nil {
		t.Fatal(err)
	}
	want := `gpu\x1b[31mX ` + "\x1b[31m! OVERCOMMIT\x1b[0m" + ` \x1b]0;t\x07` + "\n"
	if b.String() != want {
		t.Fatalf("wrote %q, want %q", b.String(), want)
	}
	// Another writer's marks are text to this one.
	b.Reset()
	y := NewWriter(&b)
	y.AllowRed()
	if _, err := io.WriteString(y, x.Red("a")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Fatalf("a foreign mark became a sequence: %q", b.String())
	}
}
