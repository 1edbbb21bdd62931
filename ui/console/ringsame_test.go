package console

import (
	"math"
	"strconv"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestRingSameBitForBit: a shared frame is taken only when the taker's
// history rings hold the composer's samples bit for bit: a gap (NaN)
// equals a gap, and -0 is not 0; every slot counts, the last one too.
func TestRingSameBitForBit(t *testing.T) {
	full := func() *ring {
		r := &ring{}
		for i := range histLen {
			r.push(float32(i%7) / 7)
		}
		r.push(float32(math.NaN()))
		return r
	}
	if a, b := full(), full(); !ringSame(a, b) {
		t.Fatal("rings of the same samples (a gap among them) differ")
	}
	for _, i := range []int{0, 1, histLen / 2, histLen - 1} {
		a, b := full(), full()
		b.v[i] = math.Float32frombits(math.Float32bits(b.v[i]) ^ 1)
		if ringSame(a, b) {
			t.Errorf("rings one bit apart in slot %d count as the same", i)
		}
	}
	a, b := &ring{}, &ring{}
	a.push(0)
	b.push(float32(math.Copysign(0, -1)))
	if ringSame(a, b) {
		t.Error("a ring of 0 and one of -0 count as the same")
	}
}

// BenchmarkHistSame is what a take of a shared frame compares: a node's
// rings, full.
func BenchmarkHistSame(b *testing.B) {
	mk := func() history {
		h := history{}
		for d := range 8 {
			dh := &devHistory{}
			for i := range histLen {
				dh.push(sample{float32(i%5) / 5, float32(d), 0.5})
			}
			h[model.DeviceKey{Name: "cuda", ID: model.DeviceID(strconv.Itoa(d))}] = dh
		}
		return h
	}
	x, y := mk(), mk()
	for b.Loop() {
		if !histSame(x, y) {
			b.Fatal("equal histories differ")
		}
	}
}
