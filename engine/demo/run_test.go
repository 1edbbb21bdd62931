package demo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	for _, tt := range []struct {
		name string
		// nodeStops: the node stops (Close); else the caller's ctx ends.
		nodeStops bool
	}{
		{"the node stops", true},
		{"the caller's context ends", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := startNode(t, Options{Seed: 1, Speed: 50, WarmUp: time.Second})
			parent, cancelParent := context.WithCancel(context.Background())
			defer cancelParent()
			ctx, cancel := n.Until(parent)
			defer cancel()
			select {
			case <-ctx.Done():
				t.Fatal("done before the node stopped or the caller's context ended")
			case <-time.After(20 * time.Millisecond):
			}
			if tt.nodeStops {
				if err := n.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				cancelParent()
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("not done 5 s after")
			}
		})
	}
}

func TestRestartAfter(t *testing.T) {
	n := startNode(t, Options{Seed: 2, Speed: 20, WarmUp: 30 * time.Second})
	eng := readyEngine(t, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	said := make(chan string, 4)
	loop := make(chan struct{})
	go func() {
		defer close(loop)
		n.RestartAfter(ctx, 100*time.Millisecond, func(s string) { said <- s })
	}()
	select {
	case s := <-said:
		t.Fatalf("said %q with no restart pending", s)
	case <-time.After(300 * time.Millisecond):
	}
	a0 := n.parts[0].id
	applySlot(t, n, eng.Latest, string(a0)+"=cuda.shares=1.5")
	select {
	case s := <-said:
		if want := "restarted " + string(a0) + ": "; !strings.HasPrefix(s, want) {
			t.Fatalf("said %q, want %q...", s, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no restart 10 s after an apply")
	}
	if !n.PendingSince().IsZero() {
		t.Error("a restart still pending after RestartAfter restarted")
	}
	if s, err := n.RestartSaid(); err != nil || s != RestartedText(nil) {
		t.Errorf("RestartSaid with nothing pending = %q, %v", s, err)
	}
	cancel()
	select {
	case <-loop:
	case <-time.After(5 * time.Second):
		t.Fatal("RestartAfter did not return once its context ended")
	}
}

func TestRun(t *testing.T) {
	shown := errors.New("the viewer failed")
	for _, tt := range []struct {
		name string
		// cancelled: the context ends before the warm-up.
		cancelled bool
		show      error
		want      error
		shows     bool
	}{
		{"a context ended during the warm-up", true, nil, nil, false},
		{"the viewer ends", false, nil, nil, true},
		{"the viewer fails", false, shown, shown, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelled {
				cancel()
			}
			var dir string
			err := Run(ctx, RunOptions{Options: Options{Seed: 1, Speed: 50, WarmUp: time.Second, Dir: t.TempDir()},
				RestartAfter: time.Millisecond, RestartAfterSet: true, Say: func(string) {},
				Show: func(ctx context.Context, n *Node) error {
					dir = n.Dir
					if ctx.Err() != nil {
						t.Error("shown with its context ended")
					}
					return tt.show
				}})
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Fatalf("Run = %v, want %v", err, tt.want)
			}
			if (dir != "") != tt.shows {
				t.Fatalf("shown in %q, want shown: %v", dir, tt.shows)
			}
			if dir != "" {
				if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s left after Run (%v)", dir, err)
				}
			}
		})
	}
}

// lineWriter takes lines until it has enough, then fails with err or,
// with err nil, ends the context.
type lineWriter struct {
	lines  []string
	enough int
	err    error
	cancel func()
}

func (w *lineWriter) Write(p []byte) (int, error) {
	if len(w.lines) >= w.enough {
		if w.err != nil {
			return 0, w.err
		}
		w.cancel()
		return len(p), nil
	}
	w.lines = append(w.lines, string(p))
	return len(p), nil
}

func TestWriteSnapshots(t *testing.T) {
	n := startNode(t, Options{Seed: 1, Speed: 50, WarmUp: time.Second})
	full := errors.New("disk full")
	for _, tt := range []struct {
		name string
		err  error
		want error
	}{
		{"until the context ends", nil, nil},
		{"the reader went away", syscall.EPIPE, nil},
		{"a write that fails", full, full},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			w := &lineWriter{enough: 1, err: tt.err, cancel: cancel}
			err := n.WriteSnapshots(ctx, time.Minute, w)
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Fatalf("WriteSnapshots = %v, want %v", err, tt.want)
			}
			if len(w.lines) != 1 || !strings.HasPrefix(w.lines[0], `{"schema":"fgtop.snapshot/v1"`) || !strings.HasSuffix(w.lines[0], "}\n") {
				t.Fatalf("wrote %.200q", w.lines)
			}
		})
	}
}
