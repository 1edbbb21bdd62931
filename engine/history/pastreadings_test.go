package history

import (
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestPastReadingsAreOfTheirMoment: the devices record keeps the
// readings that move with every poll from when the devices last changed
// otherwise. A past snapshot showed them as of the asked moment: at
// 04:39:44 GPU3 listed the processes (and temperature, power) of a kernel
// that had left it at 04:38:10. Where the record is older than the
// moment they are not known; the minute's means stand for utilisation and
// memory where a minute was summarised.
func TestPastReadingsAreOfTheirMoment(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 7, 4, 38, 0, 0, time.UTC)
	now := t0
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return now }, FlushEvery: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tel := func(util, temp uint32, procs []model.Process) *model.Telemetry {
		return &model.Telemetry{UtilGPU: model.Some(util), UtilMem: model.Some(util / 2), TempC: model.Some(temp), PowerMW: model.Some(temp * 4000),
			MemUsed: model.Some(uint64(util) << 30), MemTotal: model.Some(uint64(80 << 30)), Processes: procs, ProcUtil: model.Some(true)}
	}
	gone := []model.Process{{PID: 4112, Name: "python3", Kernel: "23ff7a63-a382-4a6c-913a-489e727afbc2"}}
	var seq uint64
	observe := func(at time.Duration, tm *model.Telemetry) {
		now = t0.Add(at)
		seq++
		rec.Observe(&model.Snapshot{Seq: seq, Time: now, Node: "n1", Usage: map[model.DeviceKey]*model.DeviceUsage{},
			Devices: []model.Device{{ID: "0", Name: "cuda", Slot: model.SlotCUDAShares, SlotType: "count", Capacity: model.MustDec("1.0"), Telemetry: tm}}})
	}
	observe(0, tel(90, 80, gone))
	observe(10*time.Second, tel(0, 30, nil))
	observe(65*time.Second, tel(20, 40, nil))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) *model.Telemetry {
		t.Helper()
		res := mustAt(t, dir, t0.Add(d))
		if len(res.Snap.Devices) != 1 || res.Snap.Devices[0].Telemetry == nil {
			t.Fatalf("at +%v: devices %+v", d, res.Snap.Devices)
		}
		return res.Snap.Devices[0].Telemetry
	}
	if got := at(0); len(got.Processes) != 1 || got.TempC != model.Some(uint32(80)) || got.UtilGPU != model.Some(uint32(90)) {
		t.Errorf("at the devices record's own moment: %+v, want its readings", got)
	}
	if got := at(10 * time.Second); len(got.Processes) != 0 || got.ProcUtil.Valid || got.TempC.Valid || got.PowerMW.Valid || got.UtilGPU.Valid || got.MemUsed.Valid || got.UtilMem.Valid {
		t.Errorf("10 s after the devices record, no minute summarised: %+v, want no readings", got)
	}
	if got := at(65 * time.Second); len(got.Processes) != 0 || got.TempC.Valid || got.UtilGPU != model.Some(uint32(45)) {
		t.Errorf("after the first minute: %+v, want its mean utilisation (45) and no other reading", got)
	}
}
