//go:build unix

package sshserve

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestThemeOverSSHTakesNamesOnly repeats issue 16's first attack: a viewer
// typing `:theme PATH` made the server (root) read any file: /dev/zero ran
// it out of memory, a FIFO hung the session, and the errors quoted the
// file and told whether root-only files exist. Over SSH a theme is now a
// name: built-in, or from the directory the server's owner configured.
func TestThemeOverSSHTakesNamesOnly(t *testing.T) {
	themeDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(themeDir, "ocean.toml"), []byte("inherit = \"light\"\nwarn = \"214\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A FIFO in the owner's directory must not hang the session either.
	if err := syscall.Mkfifo(filepath.Join(themeDir, "pipe.toml"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A secret that parses as a theme: loaded by path, it would apply
	// (and a bad one would be quoted in the error).
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret.toml")
	if err := os.WriteFile(secret, []byte("segments = [\"1\"]\nname = \"hunter2\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(secretDir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f := startServer(t, func(c *Config) { c.ThemeDir = themeDir })
	c := f.open(t, "victor", f.viewer, nil)
	c.waitScreen(t, "gpu-node01", "[read-only]")
	tests := []struct {
		arg  string
		want string // on screen after
	}{
		{"/dev/zero", "only a theme's name, not a path"},
		{"/etc/passwd", "only a theme's name, not a path"},
		{"/etc/shadow", "only a theme's name, not a path"},
		{fifo, "only a theme's name, not a path"},
		{secret, "only a theme's name, not a path"},
		{"../../etc/passwd", "only a theme's name, not a path"},
		{"pipe", "theme pipe: cannot be read: not a regular file"},
		{"nosuch", `unknown theme "nosuch" (colorblind, dark, high-contrast, light, mono, ocean)`},
		{"ocean", "theme ocean"},
		{"mono", "theme mono"},
	}
	for i, tt := range tests {
		// A marker between attacks, so each wait sees its own answer.
		marker := []string{"dark", "light"}[i%2]
		c.press(t, ":theme "+marker+"\r")
		c.waitScreen(t, "theme "+marker)
		c.press(t, ":theme "+tt.arg+"\r")
		scr := c.waitScreen(t, tt.want)
		for _, leak := range []string{"hunter2", "TOML", "root:", "permission denied", "no such file"} {
			if strings.Contains(scr, leak) {
				t.Fatalf(":theme %s shows %q:\n%s", tt.arg, leak, scr)
			}
		}
	}
	if n := f.srv.SessionCount(); n != 1 {
		t.Fatalf("%d sessions after the attacks, want the viewer's", n)
	}
}
