package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// oddStrings are what JSON quoting has to get right: quotes, backslashes,
// control bytes, HTML characters (left as they are), U+2028, bad UTF-8.
var oddStrings = []string{"", "plain", `q"uote`, `back\slash`, "tab\tnl\n\r\b\f", "\x00\x01\x1f", "<&>", "\u2028\u2029",
	"\xff\xfe bad utf-8", "ünïcödé 漢字", "\x7f", "emoji 🙂", kernelMarker[1:]}

func randomSnapshot(rng *rand.Rand, n int) *model.Snapshot {
	pick := func() string {
		if rng.IntN(3) == 0 {
			return oddStrings[rng.IntN(len(oddStrings))]
		}
		return fmt.Sprintf("%08x-%04x", rng.Uint32(), rng.IntN(1<<16))
	}
	dec := func() model.Dec {
		return model.NewDec(int64(rng.IntN(2000))-100, -int32(rng.IntN(4)))
	}
	s := &model.Snapshot{Node: pick(), Time: time.Unix(1795132800, int64(rng.IntN(1e9))), Seq: rng.Uint64(), Usage: map[model.DeviceKey]*model.DeviceUsage{}}
	for g := range 3 {
		s.Devices = append(s.Devices, model.Device{ID: model.DeviceID(fmt.Sprint(g)), Name: "cuda", Slot: model.SlotCUDAShares,
			SlotType: "count", Capacity: model.MustDec("1.0"), Index: g})
	}
	s.Agents = []model.Agent{{ID: "i-node", Held: model.ResourceSlot{"cpu": dec()}}}
	ks := make([]*model.Kernel, 0, n)
	for i := 0; i < n; i++ {
		k := &model.Kernel{ID: model.KernelID(pick() + fmt.Sprint(i)), Agent: model.AgentID(pick()), Path: pick(),
			State: model.KernelState(pick()), Container: pick(), AgentBy: model.AgentBasis(pick()), Legacy: rng.IntN(5) == 0}
		if rng.IntN(4) > 0 {
			k.Slots = model.ResourceSlot{}
			for range rng.IntN(4) {
				k.Slots[model.SlotName(pick())] = dec()
			}
		}
		if rng.IntN(5) > 0 {
			k.Alloc = model.Allocations{}
			for range rng.IntN(4) {
				devs := map[model.DeviceID]model.Dec{}
				for range rng.IntN(4) {
					devs[model.DeviceID(pick())] = dec()
				}
				k.Alloc[model.SlotName(pick())] = devs
			}
		}
		if rng.IntN(3) > 0 {
			k.ModTime = time.Unix(int64(rng.IntN(2e9)), int64(rng.IntN(3))*int64(rng.IntN(1e9))).In(time.FixedZone("x", 3600*rng.IntN(5)))
		}
		if rng.IntN(4) == 0 {
			k.Problem = &model.Issue{Severity: model.Severity(rng.IntN(3)), Code: pick(), Message: pick(), File: pick(), Line: rng.IntN(3),
				Kernel: k.ID, Agent: model.AgentID(pick()), Device: model.DeviceKey{Name: "cuda", ID: model.DeviceID(pick())}}
		}
		if rng.IntN(3) > 0 {
			k.Record = &model.KernelRecord{SessionID: pick(), SessionType: pick(), OwnerUserID: pick(), OwnerProjectID: pick(),
				Image: pick(), Architecture: pick()}
		}
		if rng.IntN(3) == 0 {
			u := &model.KernelUse{Procs: rng.IntN(4), MemOnly: rng.IntN(2) == 0, Idle: rng.IntN(2) == 0}
			if rng.IntN(2) == 0 {
				u.MemUsed = model.Some(rng.Uint64())
				u.Util = model.Some(uint32(rng.IntN(101)))
			}
			if rng.IntN(2) == 0 {
				u.IdleSince = time.Unix(int64(rng.IntN(2e9)), 0)
			}
			for range rng.IntN(3) {
				u.Devices = append(u.Devices, model.DeviceUse{Device: model.DeviceKey{Name: "cuda", ID: model.DeviceID(pick())}, Held: dec(),
					Capacity: dec(), CapacityUnknown: rng.IntN(2) == 0, Procs: rng.IntN(3), MemUsed: model.Some(rng.Uint64())})
			}
			k.Use = u
		}
		ks = append(ks, k)
	}
	s.SetKernels(ks)
	return s
}

// TestMarshalSnapshotMatchesMarshal: the hand-written kernels, split over
// goroutines or not, are byte for byte what encoding/json writes of
// FromSnapshot, compact and indented.
func TestMarshalSnapshotMatchesMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 1))
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 2, 7, 300, parallelKernels, parallelKernels + 5} {
			s := randomSnapshot(rng, n)
			for _, indent := range []bool{false, true} {
				want, err := Marshal(FromSnapshot(s), indent)
				if err != nil {
					t.Fatal(err)
				}
				got, err := MarshalSnapshot(s, indent)
				if err != nil {
					t.Fatal(err)
				}
				var w bytes.Buffer
				if err := WriteSnapshot(&w, s, indent); err != nil || !bytes.Equal(w.Bytes(), got) {
					t.Fatalf("WriteSnapshot wrote other bytes than MarshalSnapshot returns (%v)", err)
				}
				if !bytes.Equal(got, want) {
					i := 0
					for i < len(got) && i < len(want) && got[i] == want[i] {
						i++
					}
					t.Fatalf("GOMAXPROCS %d, %d kernels, indent %v: differs at byte %d:\n got …%q\nwant …%q", procs, n, indent, i,
						got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// FuzzMarshalSnapshot puts arbitrary strings in every string field of a
// kernel and compares with encoding/json.
func FuzzMarshalSnapshot(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s, s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, a, b string, seed uint64) {
		if len(a)+len(b) > 1<<12 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 2))
		s := randomSnapshot(rng, 1+int(seed%5))
		for i, k := range s.Kernels() {
			k.Path, k.Container, k.State = a, b, model.KernelState(a+b)
			if k.Record != nil {
				k.Record.Image, k.Record.SessionID = b, a
			}
			if i == 0 {
				k.Slots = model.ResourceSlot{model.SlotName(a): model.MustDec("1"), model.SlotName(b): model.MustDec("2")}
				k.Alloc = model.Allocations{model.SlotName(b): {model.DeviceID(a): model.MustDec("0.5")}}
			}
		}
		for _, indent := range []bool{false, true} {
			want, err := Marshal(FromSnapshot(s), indent)
			if err != nil {
				t.Fatal(err)
			}
			got, err := MarshalSnapshot(s, indent)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("indent %v:\n got %q\nwant %q", indent, got, want)
			}
		}
	})
}

// BenchmarkMarshalSnapshot: the document of 10,000 kernels, indented, by
// encoding/json (Plain) and by MarshalSnapshot.
func BenchmarkMarshalSnapshot(b *testing.B) {
	s := randomSnapshot(rand.New(rand.NewPCG(1, 1)), 10000)
	b.Run("Plain", func(b *testing.B) {
		for b.Loop() {
			if _, err := Marshal(FromSnapshot(s), true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Fast", func(b *testing.B) {
		for b.Loop() {
			if _, err := MarshalSnapshot(s, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}
