package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/enginetest"
)

// `fgtop record --dir` into a directory every user may write records, and
// says so on stderr with the fix; a directory it makes is 0700 and what it
// writes 0600. Before, a 0777 --dir recorded without a word and the files
// were 0644 (issue 31).
func TestRecordSaysWhenItsDirIsOpen(t *testing.T) {
	fx := enginetest.Fixtures(t)
	src := []string{"--scratch-root", "i-rec=" + t.TempDir(), "--devices", filepath.Join(fx, "mock-accelerator.toml"),
		"--mock-etcd", filepath.Join(fx, "mock-accelerator.etcd.json")}
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	made := filepath.Join(t.TempDir(), "made", "history")
	for _, c := range []struct {
		dir, want string
	}{
		{open, "is writable by every user (mode 0777)"},
		{made, ""},
	} {
		cmd := fgtopChild(append([]string{"record", "--dir", c.dir}, src...)...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var said []string
		sc := bufio.NewScanner(stderr)
		deadline := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
		for sc.Scan() {
			said = append(said, sc.Text())
			if strings.Contains(sc.Text(), "recording into") {
				break
			}
		}
		// The segment is written within a second or two of the start.
		for i := 0; i < 50; i++ {
			if m, _ := filepath.Glob(filepath.Join(c.dir, "seg-*.fgh")); len(m) > 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		deadline.Stop()
		all := strings.Join(said, "\n")
		if c.want != "" && (!strings.Contains(all, c.want) || !strings.Contains(all, "chmod 700 "+c.dir)) {
			t.Errorf("record --dir %s said:\n%s\nwant %q and the fix", c.dir, all, c.want)
		}
		if c.want == "" {
			if strings.Contains(all, "chmod") {
				t.Errorf("record --dir %s (made) warned:\n%s", c.dir, all)
			}
			if fi, err := os.Stat(c.dir); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s made with %v (%v), want 0700", c.dir, fi.Mode().Perm(), err)
			}
		}
		ents, _ := os.ReadDir(c.dir)
		segs := 0
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil {
				continue
			}
			if strings.HasPrefix(e.Name(), "seg-") {
				segs++
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %04o, want 0600", e.Name(), fi.Mode().Perm())
			}
		}
		if segs == 0 {
			t.Errorf("record --dir %s wrote no segment", c.dir)
		}
	}
}

// TestRecordHistoryFlag: record takes the directory as --history too, as
// every other command names it; two different directories are refused.
func TestRecordHistoryFlag(t *testing.T) {
	for _, c := range []struct {
		dir, history string
		want         string
		err          string
	}{
		{dir: "/h", want: "/h"},
		{history: "/h", want: "/h"},
		{dir: "/h", history: "/h", want: "/h"},
		{dir: "/a", history: "/b", err: "--dir /a and --history /b name two directories"},
		{err: "--dir DIR (or --history DIR) is required"},
		// "off" is no directory to every other command: record made ./off.
		{history: "off", err: "--history off records nothing"},
		{dir: "off", err: "--dir off records nothing"},
	} {
		f := recordFlags{dir: c.dir, history: c.history, keep: "7d", maxSize: "100MiB"}
		o, err := f.options()
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("--dir %q --history %q: %v, want %q", c.dir, c.history, err, c.err)
			}
		case err != nil || o.Dir != c.want:
			t.Errorf("--dir %q --history %q: %q %v, want %q", c.dir, c.history, o.Dir, err, c.want)
		}
	}
	cmd := newRecordCmd()
	if cmd.Flags().Lookup("history") == nil {
		t.Error("record has no --history flag")
	}
}
