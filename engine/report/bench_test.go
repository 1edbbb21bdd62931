package report_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// bigLine is the snapshot line of a node with n kernels on 8 GPUs, each
// with a record: what a fleet client reads from a busy peer.
func bigLine(b *testing.B, n int) []byte {
	b.Helper()
	s := &model.Snapshot{Node: "gpu-node01", Time: time.Unix(0, 0), Usage: map[model.DeviceKey]*model.DeviceUsage{}}
	for g := range 8 {
		s.Devices = append(s.Devices, model.Device{ID: model.DeviceID(fmt.Sprintf("c59395cd-ac91-4cd3-a1b0-3d2568aa2d%02d", g)),
			Name: "cuda", Slot: model.SlotCUDAShares, SlotType: "count", Capacity: model.MustDec("4.00"), Index: g, Model: "NVIDIA A100"})
	}
	ks := make([]*model.Kernel, n)
	for i := range ks {
		id := model.KernelID(fmt.Sprintf("%08x-0000-4000-8000-000000000000", i))
		dev := s.Devices[i%8].ID
		ks[i] = &model.Kernel{ID: id, Agent: "i-gpu-node01-numa0", State: model.KernelOK, Path: "/var/lib/backend.ai/scratches/" + string(id) + "/config/resource.txt",
			Slots:  model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.10"), "cpu": model.MustDec("1")},
			Alloc:  model.Allocations{model.SlotCUDAShares: {dev: model.MustDec("0.10")}},
			Record: &model.KernelRecord{KernelID: id, AgentID: "i-gpu-node01-numa0", SessionID: "0b59124e-5b63-4596-990a-af5bee51230b", SessionType: "batch", Image: "cr.backend.ai/stable/python-pytorch:2.3-py311-cuda12.1", Architecture: "x86_64"}}
	}
	s.SetKernels(ks)
	line, err := report.Marshal(report.FromSnapshot(s), false)
	if err != nil {
		b.Fatal(err)
	}
	return line
}

// BenchmarkParseLine is what reading one peer's snapshot costs: decode
// (encoding/json alone, the baseline) against ParseLine (decode and every
// string through untrusted.Text), and Clean alone on the decoded document.
func BenchmarkParseLine(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		line := bigLine(b, n)
		b.Run(fmt.Sprintf("decode/kernels=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				var s report.Snapshot
				if err := json.Unmarshal(line, &s); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("parseline/kernels=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, _, err := report.ParseLine(line); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("clean/kernels=%d", n), func(b *testing.B) {
			var s report.Snapshot
			if err := json.Unmarshal(line, &s); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				untrusted.Clean(&s)
			}
		})
	}
}
