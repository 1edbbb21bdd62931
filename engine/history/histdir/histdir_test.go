package histdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
)

func TestForRecordingDefaultMadeOrOff(t *testing.T) {
	t.Setenv(Env, "")
	tmp := t.TempDir()
	blocker := filepath.Join(tmp, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, flag, env, def string
		want                 string
		made                 bool
		note                 string
	}{
		{name: "missing default is made", def: filepath.Join(tmp, "var/lib/fgtop/history"), want: filepath.Join(tmp, "var/lib/fgtop/history"), made: true},
		{name: "existing default", def: tmp, want: tmp},
		{name: "cannot be made", def: filepath.Join(blocker, "history"), note: "cannot be made"},
		{name: "flag wins", flag: filepath.Join(tmp, "x"), def: filepath.Join(blocker, "history"), want: filepath.Join(tmp, "x")},
		{name: "environment before the default", env: filepath.Join(tmp, "env"), def: filepath.Join(blocker, "history"), want: filepath.Join(tmp, "env")},
		{name: "flag before the environment", flag: filepath.Join(tmp, "x"), env: filepath.Join(tmp, "env"), def: tmp, want: filepath.Join(tmp, "x")},
		{name: "off", flag: "off", def: tmp},
		{name: "off in the environment", env: "off", def: tmp},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(Env, c.env)
			dir, note := ForRecording(c.flag, c.def)
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

// The demo's record: beside the node unless --history says otherwise;
// FGTOP_HISTORY is the real node's and is not followed.
func TestForDemo(t *testing.T) {
	t.Setenv(Env, t.TempDir())
	for _, c := range []struct{ flag, want string }{
		{"", "/tmp/fgtop-demo-1/history"},
		{"off", ""},
		{"/srv/demo-history", "/srv/demo-history"},
	} {
		if got := ForDemo(c.flag, "/tmp/fgtop-demo-1"); got != c.want {
			t.Errorf("--history %q: %q, want %q", c.flag, got, c.want)
		}
	}
}

func TestForReading(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, flag, env, def string
		want, err            string
	}{
		{name: "a directory", flag: dir, want: dir},
		{name: "missing", flag: filepath.Join(dir, "none"), err: "no history at " + filepath.Join(dir, "none") + ": no such directory: name the directory"},
		{name: "a file", flag: file, err: "it is a file, not a directory"},
		{name: "off", flag: "off", err: "--history off: there is no record to read"},
		{name: "off in the environment", env: "off", def: dir, err: "FGTOP_HISTORY=off: there is no record to read (name the directory a recorder writes with --history DIR)"},
		{name: "off in the flag and the environment", flag: "off", env: "off", def: dir, err: "--history off: there is no record to read"},
		{name: "the environment", env: dir, def: file, want: dir},
		// Named as the operator set it: one who never passed --history
		// could not tell where the directory came from.
		{name: "missing, from the environment", env: filepath.Join(dir, "none"), def: dir,
			err: "no history at " + filepath.Join(dir, "none") + " (FGTOP_HISTORY=" + filepath.Join(dir, "none") + " in the environment): no such directory: correct FGTOP_HISTORY, or name the directory"},
		{name: "a file, from the environment", env: file, def: dir, err: "no history at " + file + " (FGTOP_HISTORY=" + file + " in the environment): it is a file"},
		{name: "missing, the flag over the environment", flag: filepath.Join(dir, "none"), env: dir,
			err: "no history at " + filepath.Join(dir, "none") + ": no such directory: name the directory"},
		{name: "the default", def: dir, want: dir},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(Env, c.env)
			got, err := ForReading(c.flag, c.def)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("%q, %v; want an error saying %q", got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("%q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestEmpty(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"nothing", nil, "(is fgtop record, or a console with --history, writing there?)"},
		{"garbage named like a segment", map[string]string{fmt.Sprintf("seg-%020d.fgh", time.Now().Add(-time.Hour).UnixNano()): strings.Repeat("x", 256)},
			"(skipped: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			rd, err := history.OpenReader(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !Empty(rd) {
				t.Error("Empty() = false")
			}
			err = EmptyError(dir, rd)
			if !errors.Is(err, history.ErrEmpty) || !strings.HasPrefix(err.Error(), dir+": ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("EmptyError() = %v, want ErrEmpty saying %q", err, c.want)
			}
		})
	}
}

func TestRecordOptions(t *testing.T) {
	for _, c := range []struct {
		dir, history, keep, maxSize string
		want                        string
		err                         string
	}{
		{dir: "/h", want: "/h"},
		{history: "/h", want: "/h"},
		{dir: "/h", history: "/h", want: "/h"},
		{dir: "/a", history: "/b", err: "record: --dir /a and --history /b name two directories: give one"},
		{err: "record: --dir DIR (or --history DIR) is required"},
		// "off" is no directory to every other command: record made ./off.
		{history: "off", err: "record: --history off records nothing"},
		{dir: "off", err: "record: --dir off records nothing"},
		{dir: "/h", keep: "0d", err: "--keep 0d: want a positive duration such as 7d or 36h"},
		{dir: "/h", keep: "soon", err: "--keep soon: want a positive duration"},
		{dir: "/h", maxSize: "1KiB", err: "--max-size 1KiB: want at least 1MiB"},
		{dir: "/h", maxSize: "lots", err: "--max-size lots: "},
	} {
		keep, size := c.keep, c.maxSize
		if keep == "" {
			keep = "7d"
		}
		if size == "" {
			size = "100MiB"
		}
		o, err := RecordOptions(c.dir, c.history, keep, size)
		switch {
		case c.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("%+v: %v, want %q", c, err, c.err)
			}
		case err != nil || o.Dir != c.want || o.Keep != 7*24*time.Hour || o.MaxSize != 100<<20:
			t.Errorf("%+v: %+v %v, want %q", c, o, err, c.want)
		}
	}
}

// TestForDemoFiles: a node whose files are the demo's records only where
// --history names, or inside the demo's own directory; FGTOP_HISTORY and
// the default are the host's record, and the note says how to record
// anyway. A real node's (no demo directory) is ForRecording's.
func TestForDemoFiles(t *testing.T) {
	base := t.TempDir()
	demoDir, env, def := filepath.Join(base, "fgtop-demo-1"), filepath.Join(base, "env"), filepath.Join(base, "default")
	for _, c := range []struct {
		env, flag, demo string
		want            string
		noted           bool
	}{
		{demo: demoDir, noted: true},
		{env: env, demo: demoDir, noted: true},
		{env: env, flag: "/srv/named", demo: demoDir, want: "/srv/named"},
		{flag: "off", demo: demoDir},
		{env: "off", demo: demoDir},
		{env: filepath.Join(demoDir, "history"), demo: demoDir, want: filepath.Join(demoDir, "history")},
		{env: demoDir + "-other", demo: demoDir, noted: true},
		{env: env, want: env},
	} {
		t.Setenv(Env, c.env)
		dir, note := ForDemoFiles(c.flag, def, c.demo)
		if dir != c.want || (note != "") != c.noted {
			t.Errorf("%s=%q --history %q on %q: %q, %q; want %q, noted %v", Env, c.env, c.flag, c.demo, dir, note, c.want, c.noted)
		}
		if c.noted && !strings.Contains(note, "--history DIR") {
			t.Errorf("%s=%q: %q does not say how to record anyway", Env, c.env, note)
		}
	}
	if _, err := os.Stat(def); err == nil {
		t.Errorf("the default directory %s was made for the demo's files", def)
	}
}
