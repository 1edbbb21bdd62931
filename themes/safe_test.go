//go:build unix

package themes

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadFileRefusesWhatIsNotATheme: a theme path is read only when it is
// a regular file of a theme's size, without hanging, and no error quotes
// the file (issue 16: `found "hunter"` from a file holding a password).
func TestLoadFileRefusesWhatIsNotATheme(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"dev zero", "/dev/zero", "not a regular file"},
		{"fifo", fifo, "not a regular file"},
		{"directory", dir, "not a regular file"},
		{"too large", writeFile(t, dir, "big.toml", strings.Repeat("# x\n", MaxFileSize/4+1)), "too large"},
		{"secret value", writeFile(t, dir, "pw.toml", "password hunter2\n"), "not valid TOML at line 1"},
		{"secret string", writeFile(t, dir, "pw2.toml", "x = hunter2\n"), "not valid TOML at line 1"},
		{"secret spec", writeFile(t, dir, "pw3.toml", "warn = \"hunter2\"\n"), "warn: not a colour"},
		{"secret type", writeFile(t, dir, "pw4.toml", "warn = 12345678\n"), "wrong type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := LoadFile(tt.path); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("LoadFile hangs")
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			for _, leak := range []string{"hunter2", "12345678"} {
				if strings.Contains(err.Error(), leak) {
					t.Fatalf("the error quotes the file: %v", err)
				}
			}
		})
	}
}

func TestLoadNamedNeverReadsAPath(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ocean.toml", "inherit = \"light\"\nwarn = \"#ff8800\"\n")
	writeFile(t, dir, "dark.toml", "name = \"owners-dark\"\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.toml"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := writeFile(t, t.TempDir(), "evil.toml", "name = \"evil\"\n")
	tests := []struct {
		name, dir, wantName, wantErr string
	}{
		{name: "mono", dir: dir, wantName: "mono"},
		{name: "mono", dir: "", wantName: "mono"},
		{name: "ocean", dir: dir, wantName: "ocean"},
		{name: "dark", dir: dir, wantName: "owners-dark"},
		{name: "ocean", dir: "", wantErr: "unknown theme"},
		{name: "pipe", dir: dir, wantErr: "not a regular file"},
		{name: outside, dir: dir, wantErr: "not a path"},
		{name: "/dev/zero", dir: dir, wantErr: "not a path"},
		{name: "../ocean", dir: dir, wantErr: "not a path"},
		{name: "ocean.toml", dir: dir, wantErr: "not a path"},
		{name: "", dir: dir, wantErr: "not a path"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"@"+filepath.Base(tt.dir), func(t *testing.T) {
			th, err := LoadNamed(tt.name, tt.dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrUnknown) && tt.wantErr != "not a regular file" {
					t.Fatalf("got %v, %v; want an error with %q", th, err, tt.wantErr)
				}
				if strings.Contains(err.Error(), dir) {
					t.Fatalf("the error names the server's directory: %v", err)
				}
				return
			}
			if err != nil || th.Name != tt.wantName {
				t.Fatalf("got %v, %v; want theme %s", th, err, tt.wantName)
			}
		})
	}
}
