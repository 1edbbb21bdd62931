package model

import "testing"

// BenchmarkFormatBinarySizeGiB is a GiB-scale byte count to its "s" form,
// what the console formats for host and device memory.
func BenchmarkFormatBinarySizeGiB(b *testing.B) {
	d := NewDec(85_899_345_920+123_456_789, 0)
	b.ReportAllocs()
	for b.Loop() {
		_ = FormatBinarySize(d)
	}
}
