package console

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// TestMockUnreadDeviceRows: with the mock plugin's settings in etcd not
// read, its GPUs' mode and capacities are the defaults' guess (whole
// devices, 1 each). The tour found kernels' 1.60 cuda.shares on a GPU shown
// as "1.60/1" with a full bar and "160%" in the history: an over-committed
// GPU, judged against a capacity nobody gave. The row reads "1.60/?" with
// no bar, as a CUDA plugin GPU whose settings were never read.
func TestMockUnreadDeviceRows(t *testing.T) {
	snap := mockUnreadSnap(t)
	a := testApp(t, 140, 40, snap, Options{})
	var row string
	for _, l := range strings.Split(screen(a), "\n") {
		if strings.Contains(l, "GPU0 ") {
			row = l
			break
		}
	}
	if row == "" {
		t.Fatalf("no GPU0 row:\n%s", screen(a))
	}
	if !strings.Contains(row, "1.60/?") || !strings.Contains(row, "capacity unknown") {
		t.Errorf("GPU0's row does not say its capacity is unknown:\n%s", row)
	}
	if strings.Contains(row, "1.60/1") || strings.Contains(row, "█") {
		t.Errorf("GPU0's row holds its kernels against the guessed capacity:\n%s", row)
	}
	if out := screen(a); strings.Contains(out, "160%") {
		t.Errorf("the screen shows GPU0 160%% allocated:\n%s", out)
	}
}

// TestMockUnreadFit: :fit on that node answered against the guess: a
// request of whole GPUs refused for "0 free", one of shares "unknown slot".
// Where either lands is not known, and :fit says why; cpu is answered.
func TestMockUnreadFit(t *testing.T) {
	snap := mockUnreadSnap(t)
	for _, req := range []string{"cuda.device=1", "cuda.shares=0.5"} {
		_, err := answerFit(snap, req)
		if err == nil || !strings.Contains(err.Error(), "is not known: the mock plugin's settings in etcd were not read") {
			t.Errorf(":fit %s: %v, want where it lands not known", req, err)
		}
	}
	if ans, err := answerFit(snap, "cpu=1"); err != nil || !strings.HasPrefix(ans.Short, "fit: ") {
		t.Errorf(":fit cpu=1: %+v, %v", ans, err)
	}
}

// mockUnreadSnap is a node whose mock plugin settings could not be read
// from etcd, two kernels holding 0.80 cuda.shares each of GPU0.
func mockUnreadSnap(t *testing.T) *model.Snapshot {
	t.Helper()
	fx := enginetest.Fixtures(t)
	cfg, err := inventory.LoadMockConfig(filepath.Join(fx, "mock-accelerator.toml"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	files := enginetest.NewFiles(t)
	for i := 1; i <= 2; i++ {
		id := enginetest.KernelID(i)
		enginetest.MustWriteKernel(t, root, id, files.Resource(root, id,
			[]enginetest.Share{{Dev: enginetest.MockDevices[0], Amount: model.MustDec("0.80")}}))
	}
	snap, err := engine.Build(context.Background(), engine.Options{
		Roots:     []scratch.Root{{Path: root, Agent: "i-gpu-node01"}},
		Inventory: inventory.NewMockFromConfig(cfg, inventory.UnreadMockSettings("etcd at 127.0.0.1:1: connection refused"), nil),
		Node:      "test-node",
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
