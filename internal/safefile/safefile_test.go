//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "theme.toml")
	if err := os.WriteFile(regular, []byte("password = \"hunter2\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 2000), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		path     string
		noFollow bool
		want     error // nil: reads
	}{
		{name: "regular", path: regular},
		{name: "symlink followed", path: link},
		{name: "symlink refused", path: link, noFollow: true, want: ErrNotRegular},
		{name: "fifo", path: fifo, want: ErrNotRegular},
		{name: "fifo no follow", path: fifo, noFollow: true, want: ErrNotRegular},
		{name: "dev zero", path: "/dev/zero", want: ErrNotRegular},
		{name: "dev null", path: "/dev/null", want: ErrNotRegular},
		{name: "directory", path: dir, want: ErrNotRegular},
		{name: "too large", path: big, want: ErrTooLarge},
		{name: "missing", path: filepath.Join(dir, "missing"), want: os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			var b []byte
			var err error
			go func() {
				defer close(done)
				if tt.noFollow {
					b, err = ReadFileNoFollow(tt.path, 1024)
				} else {
					b, err = ReadFile(tt.path, 1024)
				}
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("reading %s hangs", tt.path)
			}
			if tt.want == nil {
				if err != nil || !strings.Contains(string(b), "hunter2") {
					t.Fatalf("got %q, %v", b, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("the error quotes the file: %v", err)
			}
		})
	}
}

func TestOpenFileNoFollowLeavesTheLinkTargetAlone(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "journal")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []int{os.O_WRONLY | os.O_APPEND | os.O_CREATE, os.O_RDWR | os.O_CREATE | os.O_TRUNC} {
		f, err := OpenFile(link, flag, 0o600, true)
		if err == nil {
			f.Close()
			t.Fatalf("flag %#x: a symlink was opened", flag)
		}
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("flag %#x: err %v", flag, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Fatalf("the target changed: %q", b)
	}
	// A dangling link is refused too, and creates nothing.
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "created"), dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(dangling, os.O_WRONLY|os.O_CREATE, 0o600, true); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("dangling link: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "created")); err == nil {
		t.Fatal("a dangling link's target was created")
	}
}
