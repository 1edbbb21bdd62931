package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHistoryDirDefaultMadeOrOff(t *testing.T) {
	t.Setenv("FGTOP_HISTORY", "")
	tmp := t.TempDir()
	blocker := filepath.Join(tmp, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, flag, def string
		want            string
		made            bool
		note            string
	}{
		{name: "missing default is made", def: filepath.Join(tmp, "var/lib/fgtop/history"), want: filepath.Join(tmp, "var/lib/fgtop/history"), made: true},
		{name: "existing default", def: tmp, want: tmp},
		{name: "cannot be made", def: filepath.Join(blocker, "history"), note: "cannot be made"},
		{name: "flag wins", flag: filepath.Join(tmp, "x"), def: filepath.Join(blocker, "history"), want: filepath.Join(tmp, "x")},
		{name: "off", flag: "off", def: tmp},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, note := historyDirOr(c.flag, c.def)
			if dir != c.want {
				t.Errorf("dir %q, want %q", dir, c.want)
			}
			if c.note == "" && note != "" || c.note != "" && (!strings.Contains(note, c.note) || strings.Contains(note, "\n")) {
				t.Errorf("note %q, want one line with %q", note, c.note)
			}
			if c.made {
				if fi, err := os.Stat(c.want); err != nil || !fi.IsDir() {
					t.Errorf("%s not made: %v", c.want, err)
				} else if fi.Mode().Perm() != 0o700 {
					// Records are personal data: the recorder's alone.
					t.Errorf("%s made with mode %04o, want 0700", c.want, fi.Mode().Perm())
				}
			}
		})
	}
}
