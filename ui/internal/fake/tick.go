package fake

import (
	"maps"
	"slices"
	"time"

	"github.com/fgtop/fgtop/model"
)

// Tick returns the snapshot the engine publishes one second after s when
// only the telemetry moved (the NVML poll at rest): a new snapshot with new
// Devices, Agents, Issues and Usage containers, as the engine builds them
// each time, sharing every kernel and device usage, and on every
// accelerator with telemetry a new *Telemetry whose utilisation, memory,
// temperature and power readings move with n; n 0 keeps every reading (an
// idle node: new values that say the same).
func Tick(s *model.Snapshot, n int) *model.Snapshot {
	t := *s
	t.Seq++
	t.Time = s.Time.Add(time.Second)
	t.Devices = slices.Clone(s.Devices)
	for i := range t.Devices {
		d := &t.Devices[i]
		if d.Telemetry == nil {
			continue
		}
		tel := *d.Telemetry
		if n == 0 {
			d.Telemetry = &tel
			continue
		}
		if tel.UtilGPU.Valid {
			tel.UtilGPU.V = uint32((int(tel.UtilGPU.V) + n + i) % 101)
		}
		if tel.MemUsed.Valid && tel.MemTotal.Valid && tel.MemTotal.V > 0 {
			tel.MemUsed.V = (tel.MemUsed.V + uint64(n+i)*(1<<27)) % tel.MemTotal.V
		}
		if tel.TempC.Valid {
			tel.TempC.V = 30 + uint32((n+i)%50)
		}
		if tel.PowerMW.Valid {
			tel.PowerMW.V = 60_000 + uint32((n*7919+i*104_729)%300_000)
		}
		d.Telemetry = &tel
	}
	t.Agents = slices.Clone(s.Agents)
	t.Issues = slices.Clone(s.Issues)
	t.Usage = maps.Clone(s.Usage)
	return &t
}
