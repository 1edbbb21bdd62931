package engine_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// syncBuffer is a bytes.Buffer written by FollowForm and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFollowForm: on a quiet node, one line for the initial scan in the
// form asked for, then heartbeat lines only when asked for.
func TestFollowForm(t *testing.T) {
	root := t.TempDir()
	files := enginetest.NewFiles(t)
	share := []enginetest.Share{{Dev: enginetest.MockDevices[0], Amount: model.MustDec("0.5")}}
	enginetest.MustWriteKernel(t, root, enginetest.KernelID(0), files.Resource(root, enginetest.KernelID(0), share))
	for _, c := range []struct {
		name      string
		form      string
		heartbeat time.Duration
		first     string // the first line begins so
		beats     bool
	}{
		{"snapshot, no heartbeat", report.FormSnapshot, 0, `{"schema":"fgtop.snapshot/v1"`, false},
		{"ratio map with heartbeats", report.FormAllocRatio, 200 * time.Millisecond, "{", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := engine.Options{Roots: []scratch.Root{{Path: root, Agent: "a"}}, Inventory: enginetest.MockSource(t), Node: "n",
				Watch: scratch.Options{Debounce: 5 * time.Millisecond, RootPoll: 50 * time.Millisecond, FallbackRescan: 200 * time.Millisecond}}
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			var out syncBuffer
			if err := engine.FollowForm(ctx, opts, &out, c.form, c.heartbeat); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) == 0 || !strings.HasPrefix(lines[0], c.first) || strings.Contains(lines[0], `"heartbeat"`) {
				t.Fatalf("first line %q, want it to begin %q", lines[0], c.first)
			}
			beats := 0
			for _, l := range lines[1:] {
				if strings.Contains(l, `"heartbeat":true`) {
					beats++
				}
			}
			if (beats > 0) != c.beats {
				t.Errorf("%d heartbeat lines, want some: %v\n%s", beats, c.beats, out.String())
			}
		})
	}
}
