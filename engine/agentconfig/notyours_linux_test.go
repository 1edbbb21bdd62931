package agentconfig

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNotYoursRefused: a user who is not root but may write the config's
// directory could replace a config whose own permissions refuse them a
// write (root's 0644 agent.toml in a group-writable directory): the
// rename needs only the directory, and the new file was then theirs.
// Such a write is refused, --force or not, and the file is untouched. A
// file that user may write is replaced, so the child really writes.
func TestNotYoursRefused(t *testing.T) {
	if p := os.Getenv("FGTOP_TEST_NOTYOURS"); p != "" {
		data, err := os.ReadFile(p + ".next")
		if err == nil {
			_, err = Commit(CommitRequest{Path: p, BaseHash: os.Getenv("FGTOP_TEST_NOTYOURS_HASH"), Data: data, Actor: operator, ReadOnlyOK: true})
		}
		fmt.Printf("\nCOMMIT: %v\n", err)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the write as another user")
	}
	const nobody = 65534
	for _, tt := range []struct {
		mode   os.FileMode
		refuse bool
	}{{0o644, true}, {0o664, true}, {0o666, false}} {
		t.Run(tt.mode.String(), func(t *testing.T) {
			c, next := setup(t)
			dir := filepath.Dir(c.Path)
			for _, d := range []string{filepath.Dir(dir), dir} {
				if err := os.Chmod(d, 0o777); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(c.Path, tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(c.Path+".next", next, 0o644); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(dir, "agentconfig.test")
			copyExec(t, os.Args[0], bin)
			cmd := exec.Command(bin, "-test.run=^TestNotYoursRefused$", "-test.count=1")
			cmd.Env = append(os.Environ(), "FGTOP_TEST_NOTYOURS="+c.Path, "FGTOP_TEST_NOTYOURS_HASH="+c.Hash)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			got, _ := os.ReadFile(c.Path)
			st, _ := os.Stat(c.Path)
			owner := st.Sys().(*syscall.Stat_t).Uid
			if !tt.refuse {
				if !strings.Contains(string(out), "COMMIT: <nil>") || !bytes.Equal(got, next) {
					t.Fatalf("a %04o config was not written by uid %d:\n%s", tt.mode, nobody, out)
				}
				return
			}
			for _, w := range []string{"refusing to apply", "is not writable by you", fmt.Sprintf("mode %04o", tt.mode), "nothing was written"} {
				if !strings.Contains(string(out), w) {
					t.Errorf("child's answer lacks %q:\n%s", w, out)
				}
			}
			if !bytes.Equal(got, c.Raw) || owner != 0 {
				t.Errorf("the config was replaced (owner uid %d)", owner)
			}
			if baks, _ := filepath.Glob(c.Path + ".fgtop-*.bak"); len(baks) != 0 {
				t.Errorf("backups left: %v", baks)
			}
		})
	}
}

func copyExec(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
