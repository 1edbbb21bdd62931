package replay

import (
	"slices"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// oneAgentWeek is the scripted week on a node of one agent given all of
// the host's memory (hostMem bytes), every session holding mem bytes of
// it; with long, the first session holds it to the span's end.
func oneAgentWeek(t *testing.T, hostMem, mem string, long bool) (*Record, Partition) {
	t.Helper()
	rec := loadWhole(t, scriptedWeek(t).reader())
	r := *rec
	host, v := model.MustDec(hostMem), model.MustDec(mem)
	r.Devices = slices.Clone(rec.Devices)
	for i := range r.Devices {
		if r.Devices[i].Name == "mem" {
			r.Devices[i].Capacity = host
		}
	}
	r.Sessions = slices.Clone(rec.Sessions)
	for i := range r.Sessions {
		s := &r.Sessions[i]
		s.Agent = agentA
		got, req := model.Allocations{}, model.ResourceSlot{}
		for slot, devs := range s.Alloc() {
			got[slot], req[slot] = devs, s.Requested[slot]
		}
		if devs, ok := got[model.SlotMem]; ok {
			m := map[model.DeviceID]model.Dec{}
			for id := range devs {
				m[id] = v
			}
			got[model.SlotMem], req[model.SlotMem] = m, v
		}
		s.Got, s.Requested = got, req
		if long && i == 0 {
			s.End, s.Open = r.To, true
		}
	}
	a := given(&r, nil)[0]
	a.Given[model.SlotMem], a.Mem = host, host
	a.Given[model.SlotCUDAShares] = model.MustDec("4")
	return &r, Fixed([]model.Agent{a})
}

func fitsOf(r *Record, part Partition) bool {
	run := &runner{rec: r, part: part, opts: Options{Fidelity: true}, res: &Result{}}
	run.begin()
	return run.sumsFit()
}

// TestSumsFitBigHostMemory: a one-agent node with 2 TiB of memory (a
// DGX H100's, an ordinary 8-GPU node's) whose sessions hold 32 GiB for
// hours: the amount's time sum over a week, 2^41 × 6.048·10^14 ≈
// 1.3·10^27, has 28 digits, which Dec sums exactly (precision 28), and
// the use sums are far below 10^26. The chunks put together are the
// whole run; sumsFit must not refuse them.
func TestSumsFitBigHostMemory(t *testing.T) {
	if span := 7 * 24 * time.Hour; span.Nanoseconds() != 604800000000000 {
		t.Fatal("span")
	}
	for _, host := range []string{"2199023255552", "4398046511104"} { // 2 TiB, 4 TiB
		r, part := oneAgentWeek(t, host, "34359738368", false)
		if !fitsOf(r, part) {
			t.Errorf("%s bytes of host memory, 32 GiB held for hours: the sums are said not to fit", host)
		}
		if !chunksAgree(t, host+" bytes of host memory", r, part, Options{Fidelity: true, Word: 1}, 3) {
			t.Errorf("%s bytes of host memory: not cut in chunks", host)
		}
	}
	// 20 TiB for a week: 29 digits, which the whole run's product rounds.
	if r, part := oneAgentWeek(t, "21990232555520", "34359738368", false); fitsOf(r, part) {
		t.Error("20 TiB of host memory for a week: the sums are said to fit")
	}
}

// TestSumsFitUseNearCap: 96 GiB held all week by one session, and by
// the others for 34 hours (1.03·10^11 × 7.2·10^14 ≈ 7.4·10^25, below
// 10^26: the use sum stays a machine integer, and the chunks' sums are
// put together exactly) is cut in chunks; sumsFit's bound is the
// integral itself, so it needs no factor of two for the float sum's
// rounding.
func TestSumsFitUseNearCap(t *testing.T) {
	r, part := oneAgentWeek(t, "1099511627776", "103079215104", true)
	if !fitsOf(r, part) {
		t.Error("96 GiB held all week: the use sums are said not to fit")
	}
	if !chunksAgree(t, "96 GiB held all week", r, part, Options{Fidelity: true, Word: 1}, 3) {
		t.Error("96 GiB held all week: not cut in chunks")
	}
	// Past 10^26 (170 GiB, 1.3·10^26): the use sum takes the
	// decimal path, and the chunks' cannot be put together.
	r, part = oneAgentWeek(t, "1099511627776", "182536110080", true)
	if fitsOf(r, part) {
		t.Error("170 GiB held all week: the use sums are said to fit")
	}
}

// TestSumsFitAmountExponent: an amount written with a positive exponent
// (2E+13 bytes: 20 TB) has its time sum made at exponent 0 (the sum
// starts from 0), so its digits are 2·10^13 × 6·10^14, past 28: sumsFit
// refuses it as it refuses 20000000000000, not by its coefficient 2.
// (joinChunks' check does not catch it either: the last chunk's part of
// the sum is added at the run's end, after the join.)
func TestSumsFitAmountExponent(t *testing.T) {
	r, part := oneAgentWeek(t, "2E+13", "34359738368", false)
	if fitsOf(r, part) {
		t.Error("2E+13 bytes of host memory for a week: the sums are said to fit")
	}
}

// TestSumsFitDamagedAmount: a session asking a negative amount, or one
// no machine integer holds, makes the run's sums take the decimal path,
// where the chunks cannot be joined: sumsFit says so before any chunk
// runs (the second also by its digits at the least exponent), and the
// run is the whole run.
func TestSumsFitDamagedAmount(t *testing.T) {
	for _, amt := range []string{"-1073741824", "12345678901234567890E-10"} {
		r, part := oneAgentWeek(t, "1099511627776", "1073741824", false)
		s := &r.Sessions[len(r.Sessions)/2]
		v := model.MustDec(amt)
		got := map[model.DeviceID]model.Dec{}
		s.Got = s.Alloc()
		for id := range s.Got[model.SlotMem] {
			got[id] = v
		}
		s.Got[model.SlotMem], s.Requested[model.SlotMem] = got, v
		if fitsOf(r, part) {
			t.Errorf("a session asking %s bytes: the sums are said to fit", amt)
		}
		opts := Options{Fidelity: true, Word: 1, chunkAt: 1, chunks: 3}
		if runChunked(r, part, opts, 3) != nil {
			t.Errorf("a session asking %s bytes: cut in chunks", amt)
		}
	}
}

// TestFitsNodeWithinTheHost: main loads amounts up to the node's total
// plus (n-1) reservations (each counted less the reservation), but a
// suggestion stays within the host's total, so its own plan never warns
// that the agents are given more cores or memory than the node has (the
// review: 17 + 17 cores suggested on 32, reserved 2).
func TestFitsNodeWithinTheHost(t *testing.T) {
	d := model.MustDec
	for _, tc := range []struct {
		x    []string
		want bool
	}{
		{[]string{"17", "17"}, false}, // main's rule alone takes it: 15 + 15 of 30
		{[]string{"16", "16"}, true},
		{[]string{"15", "17"}, true},
		{[]string{"31", "1"}, false}, // 31 is past the 30 available to one agent
		{[]string{"30", "2"}, true},
	} {
		x := make([]model.Dec, len(tc.x))
		for i, v := range tc.x {
			x[i] = d(v)
		}
		if got := fitsNode(x, d("32"), d("2")); got != tc.want {
			t.Errorf("fitsNode(%v, 32, reserved 2) = %v, want %v", tc.x, got, tc.want)
		}
	}
}
