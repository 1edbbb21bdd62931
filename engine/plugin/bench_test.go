//go:build cgo && linux

package plugin_test

import (
	"context"
	"testing"

	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/model"
)

// BenchmarkPoll compares one poll of eight mocked H100s read raw (the
// baseline) with the same poll registered as each plugin does: the cost
// the plugin layer adds to the engine's once-a-second poll.
func BenchmarkPoll(b *testing.B) {
	ctx := context.Background()
	b.Run("nvml-raw", func(b *testing.B) {
		inner, _ := nvmlSource(b, 8)
		defer inner.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := inner.Poll(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, kind := range []string{model.PluginCUDAOpen, model.PluginCUDAFractional} {
		b.Run("registered-"+kind, func(b *testing.B) {
			inner, uuids := nvmlSource(b, 8)
			src := plugin.NewSource(inner, plugin.Options{Inputs: plugin.Inputs{Flag: kind},
				File: plugin.Parse(map[string]string{"unit_mem": "20g", "device_mask": uuids[2]}), FilePath: "p.json"})
			src.Start(0)
			defer src.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := src.Poll(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
