package history

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/model"
)

// weekNode is a 10,000-kernel node with one kernel change a second (one
// in three a new kernel, one a kernel gone, one a changed allocation), its
// snapshots built as the engine builds them: persistent kernel sequence,
// a new *DeviceUsage only for the devices a change touches.
type weekNode struct {
	rng    *rand.Rand
	kb     model.KernelSeqBuilder
	ids    []model.KernelID
	usage  map[model.DeviceKey]*model.DeviceUsage
	agent  model.Agent
	devs   []model.Device
	seq    uint64
	t      time.Time
	users  []string
	images []string
}

func hex(r *rand.Rand, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(16)]
	}
	return string(b)
}

func uuid(r *rand.Rand) string {
	h := hex(r, 32)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func newWeekNode(seed uint64, kernels int, start time.Time) *weekNode {
	n := &weekNode{rng: rand.New(rand.NewPCG(seed, 7)), usage: map[model.DeviceKey]*model.DeviceUsage{}, t: start,
		agent: model.Agent{ID: "i-gpu-node01", ScratchRoot: "/var/lib/backend.ai/scratches", Held: model.ResourceSlot{}}}
	for i := 0; i < 200; i++ {
		n.users = append(n.users, uuid(n.rng))
	}
	for i := 0; i < 30; i++ {
		n.images = append(n.images, fmt.Sprintf("cr.backend.ai/stable/python-ff:%d.%d-cuda12", 3+i/10, i%10))
	}
	for i := 0; i < 8; i++ {
		n.devs = append(n.devs, model.Device{ID: model.DeviceID(strconv.Itoa(i)), Name: "cuda", Slot: model.SlotCUDAShares, SlotType: "count",
			Capacity: model.MustDec("1.0"), Index: i, Model: "NVIDIA A100-SXM4-80GB", UUID: uuid(n.rng), MemoryBytes: 80 << 30})
	}
	for i := 0; i < kernels; i++ {
		n.add()
	}
	return n
}

func (n *weekNode) newKernel(id model.KernelID, seen time.Time) *model.Kernel {
	r := n.rng
	al := model.Allocations{model.SlotCUDAShares: {}, "cpu": {}, "mem": {"root": model.NewDec(int64(4+r.IntN(60))<<30, 0)}}
	for _, d := range r.Perm(8)[:1+r.IntN(2)] {
		al[model.SlotCUDAShares][model.DeviceID(strconv.Itoa(d))] = model.NewDec(int64(1+r.IntN(9)), -1)
	}
	c0 := r.IntN(120)
	for c := c0; c < c0+1+r.IntN(8); c++ {
		al["cpu"][model.DeviceID(strconv.Itoa(c))] = model.NewDec(1, 0)
	}
	slots := model.ResourceSlot{}
	for s, devs := range al {
		for _, v := range devs {
			slots[s] = slots[s].Add(v)
		}
	}
	user := n.users[r.IntN(len(n.users))]
	return &model.Kernel{ID: id, Agent: n.agent.ID, AgentBy: model.AgentByRecord, State: model.KernelOK,
		Path: "/var/lib/backend.ai/scratches/" + string(id) + "/config/resource.txt", ModTime: n.t, Seen: seen,
		Slots: slots, Alloc: al, Container: hex(r, 64),
		Record: &model.KernelRecord{Path: "/var/lib/backend.ai/scratches/" + string(id) + "/config/recovery.json", KernelID: id,
			AgentID: n.agent.ID, SessionID: uuid(r), SessionType: "interactive", OwnerUserID: user,
			OwnerProjectID: n.users[int(user[0])%20], Image: n.images[r.IntN(len(n.images))], Architecture: "x86_64"}}
}

func (n *weekNode) apply(k *model.Kernel, sign int) {
	for slot, devs := range k.Alloc {
		for id, v := range devs {
			key := model.DeviceKey{Name: slot.DeviceName(), ID: id}
			old := n.usage[key]
			u := &model.DeviceUsage{Key: key, Held: model.ResourceSlot{}}
			if old != nil {
				maps := old.Held
				for s, x := range maps {
					u.Held[s] = x
				}
				u.Kernels = old.Kernels
			}
			if sign > 0 {
				u.Held[slot] = u.Held[slot].Add(v)
				u.Kernels++
				n.agent.Held[slot] = n.agent.Held[slot].Add(v)
			} else {
				u.Held[slot] = u.Held[slot].Sub(v)
				u.Kernels--
				n.agent.Held[slot] = n.agent.Held[slot].Sub(v)
			}
			u.ByAgent = map[model.AgentID]model.ResourceSlot{n.agent.ID: u.Held}
			if u.Kernels == 0 {
				delete(n.usage, key)
			} else {
				n.usage[key] = u
			}
		}
	}
	n.agent.Kernels += sign
}

func (n *weekNode) add() {
	id := model.KernelID(uuid(n.rng))
	k := n.newKernel(id, n.t)
	n.kb.Put(k)
	n.ids = append(n.ids, id)
	n.apply(k, +1)
}

func (n *weekNode) step() *model.Snapshot {
	n.t = n.t.Add(time.Second)
	i := n.rng.IntN(len(n.ids))
	id := n.ids[i]
	old := n.kb.Get(id)
	switch n.rng.IntN(3) {
	case 0:
		n.add()
	case 1:
		n.apply(old, -1)
		n.kb.Delete(id)
		n.ids[i] = n.ids[len(n.ids)-1]
		n.ids = n.ids[:len(n.ids)-1]
	default:
		n.apply(old, -1)
		k := n.newKernel(id, old.Seen)
		k.Record = old.Record
		k.Container = old.Container
		n.kb.Put(k)
		n.apply(k, +1)
	}
	return n.snapshot()
}

func (n *weekNode) snapshot() *model.Snapshot {
	n.seq++
	s := &model.Snapshot{Seq: n.seq, Time: n.t, Node: "gpu-node01", Source: model.SourceInfo{Kind: "nvml", Health: "ok"},
		Devices: n.devs, Mode: "shared", Allocator: model.Allocator{Fractional: true, Quantum: model.MustDec("0.1")}}
	s.SetKernelSeq(n.kb.Seq())
	s.Usage = make(map[model.DeviceKey]*model.DeviceUsage, len(n.usage))
	for k, u := range n.usage {
		s.Usage[k] = u
	}
	a := n.agent
	a.Held = make(model.ResourceSlot, len(n.agent.Held))
	for k, v := range n.agent.Held {
		a.Held[k] = v
	}
	s.Agents = []model.Agent{a}
	return s
}

func dirSize(dir string) int64 {
	var total int64
	segs, _ := listSegments(dir)
	for _, s := range segs {
		total += s.Size
	}
	return total
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestWeekBench is the BENCHMARKS.md history row: a 10,000-kernel node
// with one change a second, replayed at full speed from a generated
// stream for FGTOP_HISTORY_WEEK hours (168 for the week), each change
// flushed on its own as on a real node; then the size, `At` at random
// moments and History of one device over the whole span.
// FGTOP_HISTORY_DIR keeps the record there (for the CLI timings).
func TestWeekBench(t *testing.T) {
	hours, _ := strconv.Atoi(os.Getenv("FGTOP_HISTORY_WEEK"))
	if hours <= 0 {
		t.Skip("set FGTOP_HISTORY_WEEK=HOURS to run")
	}
	dir := os.Getenv("FGTOP_HISTORY_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	node := newWeekNode(1, 10000, start)
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }, MaxSize: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	steps := hours * 3600
	c0, w0 := cpuTime(), time.Now()
	rec.Observe(node.snapshot())
	rec.Flush()
	for i := 0; i < steps; i++ {
		s := node.step()
		rec.Observe(s)
		rec.Flush()
	}
	rec.Close()
	cpu, wall := cpuTime()-c0, time.Since(w0)
	size := dirSize(dir)
	segs, _ := listSegments(dir)
	t.Logf("recorded %d changes (%d h) in %s wall, %s CPU (%.1f µs CPU a change, node generation included)", steps, hours,
		wall.Round(time.Millisecond), cpu.Round(time.Millisecond), float64(cpu.Microseconds())/float64(steps))
	t.Logf("size %.2f MiB in %d segments; %.1f bytes a change; week extrapolation %.1f MiB", float64(size)/(1<<20), len(segs),
		float64(size)/float64(steps), float64(size)/float64(steps)*604800/(1<<20))
	if b, err := os.ReadFile(segs[0].Path); err == nil && len(b) > headerSize+chunkHead {
		ck := int(b[headerSize+1]) | int(b[headerSize+2])<<8 | int(b[headerSize+3])<<16 | int(b[headerSize+4])<<24
		t.Logf("first checkpoint %.2f MiB; deltas %.1f bytes a change", float64(ck)/(1<<20),
			float64(size-int64(len(segs))*int64(ck))/float64(steps))
	}
	var ats []time.Duration
	rng := rand.New(rand.NewPCG(9, 9))
	for q := 0; q < 12; q++ {
		at := start.Add(time.Duration(rng.Int64N(int64(steps))) * time.Second)
		runtime.GC()
		t0 := time.Now()
		rd, err := OpenReader(dir)
		if err != nil {
			t.Fatal(err)
		}
		res, err := rd.At(at)
		if err != nil {
			t.Fatal(err)
		}
		b, err := report.Marshal(report.FromSnapshot(res.Snap), true)
		if err != nil || len(b) == 0 {
			t.Fatal(err)
		}
		ats = append(ats, time.Since(t0))
		if k := res.Snap.NumKernels(); k < 9000 || k > 11000 {
			t.Fatalf("%d kernels at %s", res.Snap.NumKernels(), at)
		}
	}
	slices.Sort(ats)
	t.Logf("At+report of a random moment: median %s, max %s (12 moments)", ats[len(ats)/2].Round(time.Millisecond), ats[len(ats)-1].Round(time.Millisecond))
	runtime.GC()
	t0 := time.Now()
	rd, _ := OpenReader(dir)
	h, err := rd.History(Filter{Device: "cuda:3"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("History cuda:3 over %d h: %s, %d intervals, %d missing", hours, time.Since(t0).Round(time.Millisecond), len(h.Intervals), len(h.Missing))
	_ = filepath.Join
}
