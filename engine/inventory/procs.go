package inventory

import (
	"github.com/fgtop/fgtop/engine/procmap"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// RawProcess is a GPU process as a driver lists it, before /proc is read.
type RawProcess struct {
	PID     uint32
	UsedMem model.Opt[uint64]
	SMUtil  model.Opt[uint32]
	MemUtil model.Opt[uint32]
}

// ProcessReader names a driver's GPU processes from /proc: command name,
// start time and container, through a procmap.Resolver, so that a PID that
// is gone or reused by the time it is read is never credited to anyone.
// The NVML source and the demo node's synthetic GPUs both use it. It is not
// safe for concurrent use.
type ProcessReader struct {
	r *procmap.Resolver
	// poll holds this poll's answers: a GPU in MIG mode lists a process
	// on the GPU and again on its slice, and it is read once.
	poll map[uint32]procmap.Info
}

// NewProcessReader reads processes under procRoot ("" means /proc).
func NewProcessReader(procRoot string) *ProcessReader {
	return &ProcessReader{r: procmap.NewResolver(procRoot), poll: map[uint32]procmap.Info{}}
}

// Mark is the moment a listing is taken: call it just before asking the
// driver for its processes.
func (p *ProcessReader) Mark() procmap.Mark { return p.r.Mark() }

// Read names the processes of one listing taken at mark.
func (p *ProcessReader) Read(raw []RawProcess, mark procmap.Mark) []model.Process {
	out := make([]model.Process, 0, len(raw))
	for _, rp := range raw {
		info, ok := p.poll[rp.PID]
		if !ok {
			info = p.r.Resolve(rp.PID, mark)
			p.poll[rp.PID] = info
		}
		mp := model.Process{PID: rp.PID, UsedMem: rp.UsedMem, SMUtil: rp.SMUtil, MemUtil: rp.MemUtil}
		switch info.Status {
		case procmap.Live:
			// A process names itself (prctl, argv[0]): its name is outside text.
			mp.Name, mp.Start, mp.Container = untrusted.Text(info.Comm), info.Start, untrusted.Text(info.Container)
		case procmap.Gone:
			mp.Owner = model.ProcGone
		case procmap.Reused:
			mp.Owner = model.ProcReused
		default:
			mp.Owner, mp.Detail = model.ProcUnknown, untrusted.Text(info.Err)
		}
		out = append(out, mp)
	}
	return out
}

// EndPoll ends a poll: the next one reads every PID afresh (from the
// resolver's cache where the start time still matches).
func (p *ProcessReader) EndPoll() {
	p.r.Sweep()
	clear(p.poll)
}
