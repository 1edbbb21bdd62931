package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// TestRecordAtDamage: a moment in the lost end of a damaged live tail is
// answered with the damage (the segment, what was lost), not only "a gap";
// a moment before the damage is still answered.
func TestRecordAtDamage(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	recordMinutes(t, dir, t0, 40, func(int) string { return "n1" })
	if _, err := RecordAt(dir, []string{"n1"}, t0.Add(5*time.Minute)); err != nil {
		t.Fatalf("before any damage: %v", err)
	}
	// Another node's record: refused with both names, never answered as
	// this node's.
	if _, err := RecordAt(dir, []string{"n2"}, t0.Add(5*time.Minute)); err == nil || !strings.Contains(err.Error(), "of node n1") || !strings.Contains(err.Error(), "not of this node (n2)") {
		t.Errorf("another node's record: %v", err)
	}
	// A node that goes by two names (serve --node, and the host name
	// `fgtop record` gives it) answers from a record under either.
	if _, err := RecordAt(dir, []string{"n2", "n1"}, t0.Add(5*time.Minute)); err != nil {
		t.Errorf("this node's record under its other name: %v", err)
	}
	tails, _ := filepath.Glob(filepath.Join(dir, "*.fgt"))
	if len(tails) != 1 {
		t.Fatalf("live tail files %v", tails)
	}
	b, err := os.ReadFile(tails[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) * 4 / 5; i < len(b)*4/5+8; i++ {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(tails[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = RecordAt(dir, []string{"n1"}, t0.Add(39*time.Minute))
	if err == nil {
		t.Fatal("a moment in the damaged tail was answered")
	}
	for _, w := range []string{"the node's record lacks", "seg-", "lost"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
	if _, err := RecordAt(dir, []string{"n1"}, t0.Add(2*time.Minute)); err != nil {
		t.Errorf("before the damage: %v", err)
	}
}

// TestRecordAtRenamedHost: a host renamed from n0 to n1 while recording
// answers fleet --at for moments before the rename (the record's last
// moment names it), as fleet history answers for the whole record; a
// node that is neither is still refused. RecordAt judged by the name at
// the moment asked and refused those moments.
func TestRecordAtRenamedHost(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	recordMinutes(t, dir, t0, 10, func(i int) string {
		if i >= 5 {
			return "n1"
		}
		return "n0"
	})
	if _, err := RecordAt(dir, []string{"n1"}, t0.Add(2*time.Minute)); err != nil {
		t.Errorf("a moment before the rename: %v", err)
	}
	if _, err := RecordAt(dir, []string{"n1"}, t0.Add(7*time.Minute)); err != nil {
		t.Errorf("a moment after the rename: %v", err)
	}
	if _, err := RecordHistory(dir, []string{"n1"}, history.Filter{}); err != nil {
		t.Errorf("fleet history of the renamed host: %v", err)
	}
	if _, err := RecordAt(dir, []string{"n2"}, t0.Add(2*time.Minute)); err == nil || !strings.Contains(err.Error(), "of node n0") {
		t.Errorf("another node asking: %v", err)
	}
}

// recordMinutes records n snapshots into dir, a minute apart from t0, of
// a one-GPU node named node(i) whose one kernel's share changes each
// minute; the recorder stays open (it holds the directory) until the
// test ends.
func recordMinutes(t *testing.T, dir string, t0 time.Time, n int, node func(i int) string) {
	t.Helper()
	now := t0
	rec, err := history.Open(history.Options{Dir: dir, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	for i := range n {
		now = t0.Add(time.Duration(i) * time.Minute)
		held := model.MustDec(fmt.Sprintf("0.%d0", 1+i%9))
		s := &model.Snapshot{Seq: uint64(i + 1), Time: now, Node: node(i),
			Devices: []model.Device{{ID: "0", Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, Capacity: model.MustDec("1.00")}},
			Agents:  []model.Agent{{ID: "a1", Owns: map[model.DeviceName][]model.DeviceID{"cuda": {"0"}}}}}
		s.SetKernels([]*model.Kernel{{ID: "k0001", Agent: "a1", Slots: model.ResourceSlot{model.SlotCUDAShares: held},
			Alloc: model.Allocations{model.SlotCUDAShares: {"0": held}}}})
		rec.Observe(s)
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}
