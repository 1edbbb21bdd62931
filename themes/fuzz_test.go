package themes

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds user theme files (outside input: --theme PATH or the XDG
// config dir) to the loader: it must return a theme or an error, never
// panic, and a theme it accepts must have every spec parsed.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("files", "*.toml"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("name = \"x\"\nsegments = []\n"))
	f.Add([]byte("text = \"#zzz bold\"\n"))
	f.Add([]byte("\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		th, err := Parse(b, "fuzz")
		if err != nil {
			if th != nil {
				t.Fatalf("Parse returned a theme and an error: %v", err)
			}
			return
		}
		if th.Name == "" {
			t.Fatal("accepted theme without a name")
		}
		if _, err := th.Parse(); err != nil {
			t.Fatalf("accepted theme whose specs do not parse: %v", err)
		}
	})
}
