package engine

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestSameGenKernelsComeAndGoAtRest: the running engine at rest (every
// poll reads the same, so it republishes the last content under its Gen)
// publishes a kernel that arrives, and one that leaves, and from then on
// never the content before it: a retimed snapshot carries the last
// content, whatever changed it, and at rest holds its Gen again.
func TestSameGenKernelsComeAndGoAtRest(t *testing.T) {
	root, opts := fixtureTree(t)
	opts.Clock = time.Now
	opts.PollEvery = 5 * time.Millisecond
	e, ch, stop := runningEngine(t, opts)
	<-e.Ready()
	next := func() *model.Snapshot { t.Helper(); return nextSnapshot(t, ch) }
	settled := func(s *model.Snapshot, n int) bool {
		if s.NumKernels() != n {
			return false
		}
		for _, k := range s.Kernels() {
			if k.State != model.KernelOK {
				return false
			}
		}
		return true
	}
	// atRest waits for the n kernels read; then every snapshot keeps
	// them, and six in a row share a Gen, other than before's.
	atRest := func(what string, n int, before uint64) uint64 {
		t.Helper()
		s := next()
		for !settled(s, n) {
			s = next()
		}
		gen, run := s.Gen, 1
		for tries := 0; run < 6; tries++ {
			if tries > 500 {
				t.Fatalf("%s: no six snapshots in a row of one Gen in 500", what)
			}
			if s = next(); !settled(s, n) {
				t.Fatalf("%s: after the %d kernels were published, a snapshot of %d (gen %d)", what, n, s.NumKernels(), s.Gen)
			}
			if s.Gen != gen {
				gen, run = s.Gen, 0
			}
			run++
		}
		if gen == before {
			t.Fatalf("%s: the content changed under the Gen before it", what)
		}
		return gen
	}
	gen := atRest("start", 3, 0)
	const kernelD = "9d1e0c7a-4b2f-4e58-8a63-0f5c2b7d1e94"
	writeKernel(t, root, kernelD, readFixture(t, "resource.cuda-shares-single.txt"))
	gen = atRest("a kernel arrived", 4, gen)
	if err := os.RemoveAll(filepath.Join(root, kernelD)); err != nil {
		t.Fatal(err)
	}
	atRest("a kernel left", 3, gen)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
