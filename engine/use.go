package engine

import (
	"slices"
	"time"

	"github.com/fgtop/fgtop/engine/procmap"
	"github.com/fgtop/fgtop/model"
)

// DefaultIdleAfter is how long a kernel must hold an accelerator at 0 %
// before it is marked holding but idle.
const DefaultIdleAfter = 10 * time.Minute

// procAgg is what one kernel's processes use of one device.
type procAgg struct {
	procs      int
	mem        uint64
	memValid   bool
	util       uint32
	utilValid  bool // every process of the kernel there has a sample
	utilMissed bool // a process without a sample
}

// setContainer records a kernel's container id (its CID= line) and marks
// the process join dirty when it changed.
func (s *state) setContainer(id model.KernelID, ks *kstate, cid string) {
	if !normalID(cid) {
		cid = procmap.NormalizeID(cid)
	}
	if ks.cid == cid {
		return
	}
	if ks.cid != "" && s.cids[ks.cid] == id {
		delete(s.cids, ks.cid)
	}
	ks.cid = cid
	if cid != "" {
		// Two kernels naming one container is a copy of a scratch dir;
		// the later one read wins, as with any other field.
		s.cids[cid] = id
	}
	s.joinDirty = true
}

// normalID reports whether procmap.NormalizeID(id) is id itself, as it is
// for the CID= lines Backend.AI writes (64 lower-case hex digits): one
// pass over the bytes instead of strings.ToLower's scan, which a full scan
// paid for every kernel.
func normalID(id string) bool {
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c >= 0x7f || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// join maps every GPU process to the kernel whose container it runs in and
// sums what each kernel's processes use per device. The inventory's
// devices are shared from poll to poll and never changed: a device with
// processes is copied, with its process list.
func (s *state) join() {
	s.joinDirty = false
	if s.inv == nil {
		s.joined = nil
		return
	}
	devs := s.inv.Devices
	agg := map[model.KernelID]map[model.DeviceKey]*procAgg{}
	var out []model.Device
	s.listed = false
	sig := make([]byte, len(devs))
	for i := range devs {
		t := devs[i].Telemetry
		s.listed = s.listed || t != nil && t.Processes != nil
		sig[i] = devState(t)
		if t == nil || len(t.Processes) == 0 {
			continue
		}
		if out == nil {
			out = slices.Clone(devs)
		}
		nt := *t
		nt.Processes = slices.Clone(t.Processes)
		// A GPU in MIG mode lists its slices' processes again: they count
		// on the slices.
		counted := !(t.MIGMode.Valid && t.MIGMode.V)
		key := devs[i].Key()
		for j := range nt.Processes {
			p := &nt.Processes[j]
			switch p.Owner {
			case model.ProcUnjoined, model.ProcKernel, model.ProcForeign:
				if kid, ok := s.cids[p.Container]; ok && p.Container != "" {
					p.Kernel, p.Owner = kid, model.ProcKernel
				} else {
					p.Kernel, p.Owner = "", model.ProcForeign
				}
			default:
				// Gone, reused or unreadable: credited to nobody.
				p.Kernel = ""
			}
			if p.Owner != model.ProcKernel || !counted {
				continue
			}
			m := agg[p.Kernel]
			if m == nil {
				m = map[model.DeviceKey]*procAgg{}
				agg[p.Kernel] = m
			}
			a := m[key]
			if a == nil {
				a = &procAgg{utilValid: true}
				m[key] = a
			}
			a.procs++
			if p.UsedMem.Valid {
				a.mem += p.UsedMem.V
				a.memValid = true
			}
			if p.SMUtil.Valid {
				a.util += p.SMUtil.V
			} else {
				a.utilValid, a.utilMissed = false, true
			}
		}
		out[i].Telemetry = &nt
	}
	s.joined = out
	if string(sig) != s.devSig {
		// Which devices list processes changed: every kernel's use may.
		s.devSig = string(sig)
		s.devEpoch++
	}
	for id := range s.agg {
		s.useDirty[id] = true
	}
	for id := range agg {
		s.useDirty[id] = true
	}
	s.agg = agg
}

// devState is what a kernel without processes on a device reads of it:
// whether it lists processes at all, and whether it is lost.
func devState(t *model.Telemetry) byte {
	switch {
	case t == nil || t.Processes == nil:
		return 0
	case t.Lost:
		return 1
	}
	return 2
}

// devices is what a snapshot publishes: the inventory's devices with their
// processes joined to kernels.
func (s *state) devices() []model.Device {
	if s.joined != nil {
		return s.joined
	}
	if s.inv == nil {
		return nil
	}
	return s.inv.Devices
}

// updateUses recomputes the use of the kernels marked dirty (every kernel
// after an inventory poll: idle time passes for all of them) and
// republishes those whose use changed.
func (s *state) updateUses() {
	now := s.now()
	if s.useAll {
		s.useAll = false
		for id, ks := range s.kernels {
			if s.useDirty[id] || s.agg[id] != nil || ks.useEpoch != s.devEpoch || s.idleDue(ks.pub.Use, now) {
				s.updateUse(id, ks, now)
			}
		}
		clear(s.useDirty)
		return
	}
	for id := range s.useDirty {
		if ks := s.kernels[id]; ks != nil {
			s.updateUse(id, ks, now)
		}
	}
	clear(s.useDirty)
}

// idleDue reports whether a use at 0 % crosses the idle mark by now: the
// one change time alone makes to a kernel without processes.
func (s *state) idleDue(u *model.KernelUse, now time.Time) bool {
	return u != nil && !u.Idle && !u.IdleSince.IsZero() && s.idleAfter > 0 && now.Sub(u.IdleSince) >= s.idleAfter
}

func (s *state) updateUse(id model.KernelID, ks *kstate, now time.Time) {
	ks.useEpoch = s.devEpoch
	old := ks.pub.Use
	u := s.kernelUse(id, ks, now)
	if u.Equal(old) {
		return
	}
	s.usesMoved = true
	if old != nil && old.Idle {
		s.idleCount--
	}
	if u != nil && u.Idle {
		s.idleCount++
	}
	k := *ks.pub
	k.Use = u
	ks.pub = &k
	s.putKernel(&k)
}

// kernelUse computes a kernel's allocated against used: per accelerator it
// holds or runs processes on, its amount beside its processes' memory and
// utilisation, and how long it has been at 0 %.
func (s *state) kernelUse(id model.KernelID, ks *kstate, now time.Time) *model.KernelUse {
	if s.inv == nil || !s.listed {
		// No device here lists processes: nothing to say (and nothing
		// to spend on kernels that mock devices hold).
		return nil
	}
	devs := s.devices()
	var du []model.DeviceUse
	at := func(key model.DeviceKey) *model.DeviceUse {
		for i := range du {
			if du[i].Device == key {
				return &du[i]
			}
		}
		du = append(du, model.DeviceUse{Device: key})
		return &du[len(du)-1]
	}
	ks.contrib.EachHeld(func(k model.DeviceKey, _ model.SlotName, amt model.Dec) {
		d := at(k)
		d.Held = d.Held.Add(amt)
	})
	ag := s.agg[id]
	for key := range ag {
		at(key)
	}
	if len(du) == 0 {
		return nil
	}
	slices.SortFunc(du, func(a, b model.DeviceUse) int { return cmpDeviceKey(a.Device, b.Device) })
	u := &model.KernelUse{Devices: du}
	known, holds := 0, false
	allUtil := true
	var maxUtil uint32
	for i := range du {
		d := &du[i]
		holds = holds || d.Held.Sign() > 0
		var t *model.Telemetry
		if di, ok := s.devIndex[d.Device]; ok && di < len(devs) {
			dv := &devs[di]
			d.Capacity, d.CapacityUnknown = dv.Capacity, dv.CapacityUnknown
			t = dv.Telemetry
		}
		a := ag[d.Device]
		if a != nil {
			d.Procs = a.procs
			u.Procs += a.procs
			if a.memValid {
				d.MemUsed = model.Some(a.mem)
				u.MemUsed = model.Some(u.MemUsed.V + a.mem)
			}
		}
		listed := t != nil && t.Processes != nil && !t.Lost
		if listed {
			known++
		}
		switch {
		case !listed:
		case a == nil:
			// The device lists its processes and none is the kernel's.
			d.Util = model.Some[uint32](0)
		case a.utilValid:
			d.Util = model.Some(min(a.util, 100))
		case t.UtilGPU.Valid && t.UtilGPU.V == 0:
			d.Util = model.Some[uint32](0)
		default:
			u.MemOnly = true
		}
		if d.Util.Valid {
			maxUtil = max(maxUtil, d.Util.V)
		} else {
			allUtil = false
		}
	}
	if known == 0 && u.Procs == 0 {
		// None of its devices lists processes.
		return nil
	}
	if allUtil {
		u.Util = model.Some(maxUtil)
	}
	// The idle clock starts once the kernel has a container: before its
	// CID= line the agent is still creating it (an image pull can take
	// minutes), and a kernel being born is not one left idle.
	if holds && allUtil && maxUtil == 0 && ks.pub.Container != "" {
		u.IdleSince = now
		if old := ks.pub.Use; old != nil && !old.IdleSince.IsZero() {
			u.IdleSince = old.IdleSince
		}
		u.Idle = s.idleAfter > 0 && now.Sub(u.IdleSince) >= s.idleAfter
	}
	return u
}
