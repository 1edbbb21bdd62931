package inventory

import (
	"context"
	"fmt"
	"testing"
)

// reportCore adds the share of one core a 1 Hz poll costs, the DESIGN.md
// budget being 1 %.
func reportCore(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e9*100, "%core@1Hz")
}

// BenchmarkPollMock polls 8 mock GPUs plus this machine's CPU cores and
// memory, as `fgtop --devices mock-accelerator.toml` does every second.
func BenchmarkPollMock(b *testing.B) {
	devs := make([]string, 8)
	for i := range devs {
		devs[i] = a100(fmt.Sprintf("c59395cd-ac91-4cd3-a1b0-3d2568aa2d%02d", i), i%2)
	}
	dir := b.TempDir()
	toml := writeFile(b, dir, "mock-accelerator.toml", mockTOML(devs...))
	etcd := writeFile(b, dir, "etcd.json", `{"allocation_mode":"fractional"}`)
	src, err := NewMock(toml, etcd, NewHost(HostOptions{}))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Poll(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportCore(b)
}

// BenchmarkHostReread is the host's worst case: /sys and /proc re-read on
// every call (Refresh < 0) instead of every 30 s.
func BenchmarkHostReread(b *testing.B) {
	h := NewHost(HostOptions{Refresh: -1})
	b.ReportAllocs()
	for b.Loop() {
		if info := h.Read(); len(info.Devices) == 0 {
			b.Fatal("no devices")
		}
	}
	reportCore(b)
}
