package history

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// seen is a snapshot as a subscriber saw it live, with its document.
type seen struct {
	snap *model.Snapshot
	doc  []byte
}

func docOf(t testing.TB, s *model.Snapshot) []byte {
	t.Helper()
	b, err := report.Marshal(report.FromSnapshot(s), true)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// churn runs an engine on a real scratch tree with the mock devices,
// changes kernels (new, changed, torn, removed) for rounds, and hands
// every snapshot it publishes to obs as well as returning them.
func churn(t *testing.T, rounds int, obs func(*model.Snapshot)) []seen {
	t.Helper()
	root := t.TempDir()
	files := enginetest.NewFiles(t)
	devs := []model.DeviceID{"0", "1", "2", "3"}
	rng := rand.New(rand.NewPCG(7, 9))
	for i := 0; i < 20; i++ {
		enginetest.MustWriteKernel(t, root, enginetest.KernelID(i), files.Random(root, enginetest.KernelID(i), devs, rng))
	}
	live := enginetest.Start(t, engine.Options{Roots: []scratch.Root{{Path: root, Agent: "i-test"}}, Inventory: enginetest.MockSource(t),
		Node: "node-h", PollEvery: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := live.Eng.Subscribe(ctx)
	var out []seen
	take := func(wait time.Duration) {
		deadline := time.After(wait)
		for {
			select {
			case s := <-ch:
				obs(s)
				out = append(out, seen{s, docOf(t, s)})
			case <-deadline:
				return
			}
		}
	}
	take(100 * time.Millisecond)
	next := 20
	for r := 0; r < rounds; r++ {
		switch rng.IntN(4) {
		case 0:
			id := enginetest.KernelID(next)
			next++
			enginetest.MustWriteKernel(t, root, id, files.Random(root, id, devs, rng))
		case 1:
			id := enginetest.KernelID(rng.IntN(next))
			os.RemoveAll(filepath.Join(root, id))
		case 2:
			id := enginetest.KernelID(rng.IntN(next))
			if _, err := os.Stat(filepath.Join(root, id)); err == nil {
				enginetest.MustWriteKernel(t, root, id, []byte("SLOTS={\"cuda.shares\": \"0.3\""))
			}
		default:
			id := enginetest.KernelID(rng.IntN(next))
			if _, err := os.Stat(filepath.Join(root, id)); err == nil {
				enginetest.MustWriteKernel(t, root, id, files.Random(root, id, devs, rng))
			}
		}
		take(30 * time.Millisecond)
	}
	take(200 * time.Millisecond)
	return out
}

func TestRecordThenReplayMatchesLive(t *testing.T) {
	dir := t.TempDir()
	rec, err := Open(Options{Dir: dir, FlushEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	got := churn(t, 60, func(s *model.Snapshot) {
		rec.Observe(s)
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) < 30 {
		t.Fatalf("only %d snapshots seen", len(got))
	}
	distinct := map[string]bool{}
	for _, s := range got {
		distinct[string(bytes.ReplaceAll(s.doc, []byte(s.snap.Time.UTC().Format(time.RFC3339Nano)), nil))] = true
	}
	if len(distinct) < 20 {
		t.Fatalf("only %d distinct snapshots of %d", len(distinct), len(got))
	}
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		res, err := rd.At(s.snap.Time)
		if err != nil {
			t.Fatalf("snapshot %d (seq %d): %v", i, s.snap.Seq, err)
		}
		if !res.Exact || len(res.Missing) > 0 {
			t.Fatalf("snapshot %d: not exact: %v", i, res.Missing)
		}
		if d := docOf(t, res.Snap); !bytes.Equal(d, s.doc) {
			t.Fatalf("snapshot %d (seq %d) differs:\n%s", i, s.snap.Seq, firstDiff(s.doc, d))
		}
	}
	if _, err := rd.At(got[0].snap.Time.Add(-time.Second)); err == nil {
		t.Fatal("a time before the record: no error")
	}
}

func firstDiff(a, b []byte) string {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(al) && i < len(bl); i++ {
		if !bytes.Equal(al[i], bl[i]) {
			return fmt.Sprintf("line %d:\nlive:   %s\nrecord: %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(al), len(bl))
}
