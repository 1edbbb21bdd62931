package scratch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// scanEach runs s.scanEach and checks that emit is never called
// concurrently.
func scanEach(t *testing.T, ctx context.Context, s *scanner[string], roots []Root) ([]Event[string], bool) {
	t.Helper()
	var evs []Event[string]
	var inside atomic.Int32
	finished := s.scanEach(ctx, roots, func(e Event[string]) {
		if inside.Add(1) != 1 {
			t.Error("emit called concurrently")
		}
		// Give a concurrent call the time to show up.
		if len(evs)%16 == 0 {
			time.Sleep(50 * time.Microsecond)
		}
		evs = append(evs, e)
		inside.Add(-1)
	})
	return evs, finished
}

// byRoot puts ScanEach's events in Scan's order: root by root (in the
// order of roots), the kernel events sorted by kernel id, then the root's
// own event, with Present sorted.
func byRoot(roots []Root, evs []Event[string]) []Event[string] {
	var out []Event[string]
	for _, r := range roots {
		var kernels, own []Event[string]
		for _, e := range evs {
			switch {
			case e.Root != r.Path:
			case e.Kernel != "":
				kernels = append(kernels, e)
			default:
				if e.Kind == Resynced {
					e.Present = slices.Clone(e.Present)
					slices.Sort(e.Present)
				}
				own = append(own, e)
			}
		}
		slices.SortStableFunc(kernels, func(a, b Event[string]) int { return strings.Compare(string(a.Kernel), string(b.Kernel)) })
		out = append(append(out, kernels...), own...)
	}
	return out
}

// checkOrder checks ScanEach's documented order: every kernel event before
// every root-level event.
func checkOrder(t *testing.T, evs []Event[string]) {
	t.Helper()
	seenRoot := false
	for _, e := range evs {
		if e.Kernel == "" {
			seenRoot = true
		} else if seenRoot {
			t.Fatalf("kernel event %s after a root-level event", evString(e))
		}
	}
}

// TestScanEachAgreesWithScan reads the trees of the Scan tests with
// ScanEach: the same events (kernel events in another order), the same
// refusals of symlinks, whatever the number of workers.
func TestScanEachAgreesWithScan(t *testing.T) {
	layout := t.TempDir()
	mkKernel(t, layout, kid(3), "C")
	mkKernel(t, layout, kid(1), "A")
	mkKernel(t, layout, kid(5), "BAD")
	mkdir(t, filepath.Join(layout, kid(2)))
	mkdir(t, filepath.Join(layout, kid(4), "config"))
	mkdir(t, filepath.Join(layout, kid(1)+"_tmp"))
	writeFile(t, filepath.Join(layout, kid(7)), "a file named like a kernel")
	mkdir(t, filepath.Join(layout, kid(8), "config", "resource.txt"))
	links, _ := symlinkTree(t)
	many := t.TempDir()
	for i := range 3*listChunk + 5 {
		mkKernel(t, many, kid(i*7919%100003), fmt.Sprint(i))
	}
	base := t.TempDir()
	trees := map[string][]Root{
		"layout":   {{Path: layout, Agent: "a"}},
		"symlinks": {{Path: links, Agent: "a"}},
		"roots":    {{Path: many, Agent: "m"}, {Path: filepath.Join(base, "nope"), Agent: "x"}, {Path: layout, Agent: "l"}},
	}
	for name, roots := range trees {
		for _, workers := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/%d", name, workers), func(t *testing.T) {
				want := evStrings(Scan(context.Background(), roots, parseText, workers))
				evs, finished := scanEach(t, context.Background(), &scanner[string]{parse: parseText, workers: workers}, roots)
				if !finished {
					t.Fatal("not finished")
				}
				checkOrder(t, evs)
				if got := evStrings(byRoot(roots, evs)); !slices.Equal(got, want) {
					t.Fatalf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
				}
				for _, e := range evs {
					if strings.Contains(e.Value, "SECRET") {
						t.Errorf("read through a symlink: %s", evString(e))
					}
				}
			})
		}
	}
}

// TestScanEachListingOrder checks that kernels come in the directory's own
// order (the order a readdir, and Backend.AI's scan, sees them), with the
// root's Resynced last.
func TestScanEachListingOrder(t *testing.T) {
	root := t.TempDir()
	const n = 4*listChunk + 3
	for i := range n {
		mkKernel(t, root, kid(i*7919%100003), "x")
	}
	f, err := os.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var want []model.KernelID
	for _, name := range names {
		want = append(want, model.KernelID(name))
	}
	for _, workers := range []int{1, 2, 4} {
		evs, _ := scanEach(t, context.Background(), &scanner[string]{parse: parseText, workers: workers}, []Root{{Path: root}})
		var got []model.KernelID
		for _, e := range evs[:len(evs)-1] {
			got = append(got, e.Kernel)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%d workers: kernels not in listing order", workers)
		}
		if last := evs[len(evs)-1]; last.Kind != Resynced || !slices.Equal(last.Present, want) {
			t.Fatalf("%d workers: last event %s", workers, evString(last))
		}
	}
}

// TestScanEachInjectedErrors is TestScanInjectedErrors for ScanEach: a
// file that cannot be read and a root that cannot be listed are reported.
func TestScanEachInjectedErrors(t *testing.T) {
	s, r1, r2, denied := faultyTree(t)
	roots := []Root{{Path: r1}, {Path: r2}}
	evs, _ := scanEach(t, context.Background(), s, roots)
	checkOrder(t, evs)
	got := evStrings(byRoot(roots, evs))
	want := []string{
		`kernel-updated 00000001 "one"`,
		`problem 00000002 {permission-denied error ` + denied + `}`,
		`resynced [00000001,00000002]`,
		`problem {permission-denied error ` + r2 + `}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestScanEachCancelled checks that a cancelled scan stops, claims no
// resync, and says so.
func TestScanEachCancelled(t *testing.T) {
	root := t.TempDir()
	for i := range 3 * listChunk {
		mkKernel(t, root, kid(i), "x")
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	finished := ScanEach(ctx, []Root{{Path: root}}, parseText, 2, func(e Event[string]) {
		if e.Kind == Resynced {
			t.Error("a cancelled scan must not claim a full resync")
		}
		if n++; n == 10 {
			cancel()
		}
	})
	if finished {
		t.Error("a cancelled scan reported finished")
	}
	if n != 10 {
		t.Errorf("%d events, want none after the one that cancelled (the 10th)", n)
	}
}
