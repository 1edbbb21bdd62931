package themes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinsParse(t *testing.T) {
	want := []string{Colorblind, Dark, HighContrast, Light, Mono}
	got := Names()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, name := range got {
		t.Run(name, func(t *testing.T) {
			th, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			if th.Name != name {
				t.Errorf("name = %q, want %q", th.Name, name)
			}
			if _, err := th.Parse(); err != nil {
				t.Errorf("parse: %v", err)
			}
		})
	}
}

func TestMonoHasNoColour(t *testing.T) {
	sp, err := MustBuiltin(Mono).Parse()
	if err != nil {
		t.Fatal(err)
	}
	all := append([]Spec{sp.Text, sp.Dim, sp.Title, sp.TitleFocused, sp.Accent, sp.Border, sp.Selected,
		sp.Badge, sp.OK, sp.Info, sp.Warn, sp.Crit, sp.NA, sp.Free, sp.Over, sp.HelpKey, sp.HelpDesc}, sp.Segments...)
	for i, s := range all {
		if s.FG != nil || s.BG != nil {
			t.Errorf("spec %d has a colour: %+v", i, s)
		}
	}
	if !MustBuiltin(Mono).Patterned {
		t.Error("mono must be patterned: colour is all it lacks")
	}
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in      string
		wantErr bool
		check   func(Spec) bool
	}{
		{"", false, func(s Spec) bool { return s.IsZero() }},
		{"bold", false, func(s Spec) bool { return s.Bold && s.FG == nil }},
		{"214 on:16 bold", false, func(s Spec) bool { return s.FG != nil && s.BG != nil && s.Bold }},
		{"#fff", false, func(s Spec) bool { r, g, b, _ := s.FG.RGBA(); return r == 0xffff && g == 0xffff && b == 0xffff }},
		{"#00ff00 reverse faint italic underline", false, func(s Spec) bool { return s.Reverse && s.Faint && s.Italic && s.Underline }},
		{"9", false, func(s Spec) bool { return s.FG != nil }},
		{"256", true, nil},
		{"#12345", true, nil},
		{"#gggggg", true, nil},
		{"blinky", true, nil},
		{"on:nope", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseSpec(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.check != nil && !tt.check(s) {
				t.Errorf("unexpected spec %+v", s)
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	writeFile(t, cfg, "fgtop/themes/ocean.toml", "inherit = \"light\"\nwarn = \"#ff8800 bold\"\n")
	writeFile(t, cfg, "fgtop/themes/dark.toml", "name = \"my-dark\"\nok = \"46\"\n")
	other := t.TempDir()
	byPath := writeFile(t, other, "custom.toml", "segments = [\"1\", \"2\"]\n")
	bad := writeFile(t, other, "bad.toml", "warn = \"214\"\nwran = \"1\"\n")
	badSpec := writeFile(t, other, "badspec.toml", "warn = \"blinky\"\n")
	badBase := writeFile(t, other, "badbase.toml", "inherit = \"nope\"\n")

	tests := []struct {
		arg       string
		wantName  string
		wantDark  bool
		wantErr   string
		wantWarn  string
		wantSegs  int
		checkWarn bool
	}{
		{arg: "light", wantName: "light"},
		{arg: "mono", wantName: "mono", wantDark: true},
		{arg: "ocean", wantName: "ocean", checkWarn: true, wantWarn: "#ff8800 bold"},
		{arg: "dark", wantName: "my-dark", wantDark: true},
		{arg: byPath, wantName: "custom", wantDark: true, wantSegs: 2},
		{arg: bad, wantErr: "wran"},
		{arg: badSpec, wantErr: "warn: "},
		{arg: badBase, wantErr: "inherit"},
		{arg: "nosuch", wantErr: "unknown theme"},
		{arg: "../etc", wantErr: "no such file"},
		{arg: "a b", wantErr: "unknown theme"},
		{arg: filepath.Join(other, "missing.toml"), wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.arg), func(t *testing.T) {
			th, err := Load(tt.arg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if th.Name != tt.wantName || th.Dark != tt.wantDark {
				t.Errorf("got name %q dark %v, want %q %v", th.Name, th.Dark, tt.wantName, tt.wantDark)
			}
			if tt.checkWarn && th.Warn != tt.wantWarn {
				t.Errorf("warn = %q, want %q", th.Warn, tt.wantWarn)
			}
			if tt.wantSegs > 0 && len(th.Segments) != tt.wantSegs {
				t.Errorf("segments = %v", th.Segments)
			}
		})
	}
}

func TestLoadUnknownIsErrUnknown(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	_, err := Load("nosuch")
	if !errors.Is(err, ErrUnknown) {
		t.Fatalf("err = %v, want ErrUnknown", err)
	}
}

func TestBuiltinIsACopy(t *testing.T) {
	a := MustBuiltin(Dark)
	a.Segments[0] = "1"
	a.Warn = "1"
	b := MustBuiltin(Dark)
	if b.Segments[0] == "1" || b.Warn == "1" {
		t.Fatal("changing one loaded theme changed another")
	}
	c := b.Clone()
	c.Segments[0] = "2"
	if b.Segments[0] == "2" {
		t.Fatal("Clone shares Segments")
	}
}

func TestAutoAndNoColor(t *testing.T) {
	if Auto(true).Name != Dark || Auto(false).Name != Light {
		t.Error("Auto picks the wrong theme")
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"NO_COLOR": ""}, false},
		{map[string]string{"NO_COLOR": "1"}, true},
	}
	for _, tt := range tests {
		if got := NoColor(env(tt.env)); got != tt.want {
			t.Errorf("NoColor(%v) = %v", tt.env, got)
		}
	}
	if NoColor(nil) {
		t.Error("NoColor(nil) = true")
	}
}
