package history

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// Filter selects what History lists: one of Device, Kernel, User, and
// the time range (zero: unbounded).
type Filter struct {
	// Device is "cuda:0", or a bare id ("0") for any accelerator of that id.
	Device string
	// Kernel is a kernel id or a unique prefix of one.
	Kernel string
	// User is an owner user id (recovery.json's owner_user_id).
	User         string
	Since, Until time.Time
}

// Interval is one kernel holding one device, with the same amounts and
// owner, from From to To.
type Interval struct {
	Device  model.DeviceKey
	Kernel  model.KernelID
	Agent   model.AgentID
	Session string
	User    string
	Project string
	Amounts model.ResourceSlot
	From    time.Time
	To      time.Time
	// Since: it held the device already when the record (or the record
	// after a gap) began, so From is when it was first seen, not when it
	// began.
	Since bool
	// Open: it still held the device when the record ends (To is the end).
	Open bool
	// Gone: it stopped sometime in a gap of the record, after To.
	Gone bool
}

// HistoryResult is what History found.
type HistoryResult struct {
	Intervals []Interval
	Missing   []Missing
	From, To  time.Time
	// Partitions are the agent.toml journal's records in the asked span,
	// oldest first, gathered in the same pass (Reader.Partitions would
	// read the whole record again).
	Partitions []agentconfig.JournalRecord
}

type ktrack struct {
	head kernelHead
	open map[model.DeviceKey]*Interval
}

type histWalk struct {
	f          Filter
	cur        map[model.KernelID]*ktrack
	out        []Interval
	prefixOnly bool
}

func (h *histWalk) match(iv *Interval) bool {
	f := h.f
	switch {
	case f.Device != "":
		if iv.Device.String() != f.Device && !(strings.IndexByte(f.Device, ':') < 0 && string(iv.Device.ID) == f.Device) {
			return false
		}
	case f.Kernel != "":
		if !strings.HasPrefix(string(iv.Kernel), f.Kernel) {
			return false
		}
	case f.User != "":
		if iv.User != f.User {
			return false
		}
	}
	if !f.Since.IsZero() && iv.To.Before(f.Since) && !iv.Open {
		return false
	}
	if !f.Until.IsZero() && iv.From.After(f.Until) {
		return false
	}
	return true
}

func (h *histWalk) close(iv *Interval, at time.Time, gone bool) {
	iv.To, iv.Gone = at, gone
	if h.match(iv) {
		h.out = append(h.out, *iv)
	}
}

// put applies one kernel's new head at t.
func (h *histWalk) put(kh kernelHead, t time.Time, since bool) {
	tr := h.cur[kh.ID]
	if tr == nil {
		// A kernel or user query follows only its own kernels; a device
		// query all (a kernel may move onto the device later).
		if h.f.Kernel != "" && !strings.HasPrefix(string(kh.ID), h.f.Kernel) || h.f.User != "" && kh.User != h.f.User {
			return
		}
		tr = &ktrack{}
		h.cur[kh.ID] = tr
	}
	// Most kernels of a device query hold nothing on the device: no maps
	// for them.
	var amounts map[model.DeviceKey]model.ResourceSlot
	for slot, devs := range kh.Alloc {
		name := slot.DeviceName()
		if !model.CarriesHoldings(name) {
			continue
		}
		for id, amt := range devs {
			k := model.DeviceKey{Name: name, ID: id}
			if !h.deviceWanted(k) {
				continue
			}
			if amounts == nil {
				amounts = map[model.DeviceKey]model.ResourceSlot{}
			}
			if amounts[k] == nil {
				amounts[k] = model.ResourceSlot{}
			}
			amounts[k][slot] = amt
		}
	}
	for k, iv := range tr.open {
		a, ok := amounts[k]
		if ok && sameSlots(a, iv.Amounts) && iv.Agent == kh.Agent && iv.User == kh.User && iv.Session == kh.Session {
			delete(amounts, k)
			continue
		}
		h.close(iv, t, false)
		delete(tr.open, k)
	}
	for k, a := range amounts {
		if tr.open == nil {
			tr.open = map[model.DeviceKey]*Interval{}
		}
		tr.open[k] = &Interval{Device: k, Kernel: kh.ID, Agent: kh.Agent, Session: kh.Session, User: kh.User, Project: kh.Project,
			Amounts: a, From: t, Since: since}
	}
	tr.head = kh
}

// deviceWanted: with a device query, only that device's intervals are
// kept.
func (h *histWalk) deviceWanted(k model.DeviceKey) bool {
	d := h.f.Device
	return d == "" || strings.IndexByte(d, ':') < 0 && string(k.ID) == d || k.Name == model.DeviceName(d[:max(strings.IndexByte(d, ':'), 0)]) && string(k.ID) == d[strings.IndexByte(d, ':')+1:]
}

func (h *histWalk) gone(id model.KernelID, t time.Time, inGap bool) {
	tr := h.cur[id]
	if tr == nil {
		return
	}
	for _, iv := range tr.open {
		h.close(iv, t, inGap)
	}
	delete(h.cur, id)
}

func sameSlots(a, b model.ResourceSlot) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !same(v, w) {
			return false
		}
	}
	return true
}

// History lists who held what over the record, oldest first.
func (r *Reader) History(f Filter) (*HistoryResult, error) {
	if len(r.segs) == 0 {
		return nil, ErrEmpty
	}
	h := &histWalk{f: f, cur: map[model.KernelID]*ktrack{}}
	res := &HistoryResult{From: r.segs[0].Start}
	// With --since, reading starts at the checkpoint before it: what was
	// held then shows as held since that checkpoint ("<").
	first := 0
	if !f.Since.IsZero() {
		for first+1 < len(r.segs) && !r.segs[first+1].Start.After(f.Since) {
			first++
		}
	}
	segs := r.segs[first:]
	var prevEnd time.Time
	carry := false // the previous segment continues into this one
	// The segments are read and decompressed one ahead, on another core,
	// without their checkpoints (a segment that continues the previous one
	// does not need its own); one that does is read again.
	pre := make(chan *segRead, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(pre)
		// Three buffers in turn: one being walked, one waiting in pre,
		// one being filled; the walk keeps no slice of a segment's bytes
		// past the segment.
		rd := &Reader{dir: r.dir, segs: segs, bufs: make([][]byte, 3)}
		for i := range segs {
			sr := rd.read(i, i > 0)
			select {
			case pre <- sr:
			case <-stop:
				return
			}
		}
	}()
	rs := &Reader{dir: r.dir, segs: segs}
	for i := range segs {
		if !f.Until.IsZero() && segs[i].Start.After(f.Until) {
			break
		}
		// Segments wholly before Since matter only for what is open when
		// it begins; their checkpoint alone would not say since when, so
		// they are read all the same.
		sr := <-pre
		if !carry && i > 0 {
			sr = rs.read(i, false)
		}
		name := filepath.Base(segs[i].Path)
		if sr.err != nil || sr.data.Checkpoint == nil {
			why := "cannot be read"
			if sr.err != nil {
				why = sr.err.Error()
			} else if sr.data.Damage != "" {
				why = sr.data.Damage
			}
			to := time.Now()
			if i+1 < len(segs) {
				to = segs[i+1].Start
			}
			res.Missing = append(res.Missing, Missing{From: segs[i].Start, To: to, Why: fmt.Sprintf("segment %s: %s", name, why)})
			carry = false
			continue
		}
		start := segs[i].Start
		if !carry {
			// A fresh start: the checkpoint is the truth. Whatever it
			// lacks ended in the gap; whatever it adds began there.
			inCk := map[model.KernelID]kernelHead{}
			w := walker{onGroup: func(tm time.Time, grp []rawRec, ckpt bool) {
				if !ckpt {
					return
				}
				for _, rr := range grp {
					if rr.typ == recKernel {
						d := dec{b: rr.body}
						kh := decodeKernelHeadOf(&d, h.deviceWanted)
						if d.err == nil {
							inCk[kh.ID] = kh
						}
					}
				}
			}}
			ckOnly := &segRead{file: sr.file, data: &segData{Checkpoint: sr.data.Checkpoint}}
			w.scan(ckOnly, nil, time.Time{})
			gapAt := prevEnd
			if i == 0 {
				gapAt = start
			}
			for id := range h.cur {
				if _, ok := inCk[id]; !ok {
					h.gone(id, gapAt, true)
				}
			}
			for _, kh := range inCk {
				_, known := h.cur[kh.ID]
				h.put(kh, start, !known)
			}
		}
		w := walker{onGroup: func(tm time.Time, grp []rawRec, ckpt bool) {
			if ckpt {
				return
			}
			for _, rr := range grp {
				switch rr.typ {
				case recKernel:
					d := dec{b: rr.body}
					kh := decodeKernelHeadOf(&d, h.deviceWanted)
					if d.err == nil {
						h.put(kh, tm, false)
					}
				case recKernelPatch:
					d := dec{b: rr.body}
					id := model.KernelID(d.id())
					tr := h.cur[id]
					if d.err != nil || tr == nil {
						continue
					}
					k := &model.Kernel{ID: id, Agent: tr.head.Agent, State: tr.head.State, Alloc: tr.head.Alloc}
					if tr.head.Session != "" || tr.head.User != "" || tr.head.Project != "" {
						k.Record = &model.KernelRecord{SessionID: tr.head.Session, OwnerUserID: tr.head.User, OwnerProjectID: tr.head.Project}
					}
					mask := decodePatchHead(&d, k, h.deviceWanted)
					if d.err != nil || mask&headFields == 0 {
						continue
					}
					kh := kernelHead{ID: id, Agent: k.Agent, State: k.State, Alloc: k.Alloc}
					if r := k.Record; r != nil {
						kh.Session, kh.User, kh.Project = r.SessionID, r.OwnerUserID, r.OwnerProjectID
					}
					h.put(kh, tm, false)
				case recKernelGone:
					d := dec{b: rr.body}
					if id := model.KernelID(d.id()); d.err == nil {
						h.gone(id, tm, false)
					}
				}
			}
		}}
		w.onJournal = func(body []byte) {
			var jr agentconfig.JournalRecord
			if json.Unmarshal(body, &jr) != nil {
				return
			}
			if (f.Since.IsZero() || !jr.Time.Before(f.Since)) && (f.Until.IsZero() || !jr.Time.After(f.Until)) {
				res.Partitions = append(res.Partitions, jr)
			}
		}
		w.scan(sr, nil, time.Time{})
		end := sr.end
		if end.IsZero() {
			end = start
		}
		prevEnd = end
		res.To = end
		damaged := sr.data.Damage != "" && (!sr.data.Torn || i < len(segs)-1)
		carry = !damaged && i+1 < len(segs) && w.continues(segs[i+1].Start)
		next := time.Time{}
		if i+1 < len(segs) {
			next = segs[i+1].Start
		}
		switch {
		case damaged:
			to := next
			if to.IsZero() {
				to = end
			}
			res.Missing = append(res.Missing, Missing{From: end, To: to,
				Why: fmt.Sprintf("segment %s: %s at byte %d; the rest of it is lost", name, sr.data.Damage, sr.data.Offset)})
		case !next.IsZero():
			if m, ok := gapBetween(end, next, sr.clean, w.rotated, w.continues(next)); ok {
				res.Missing = append(res.Missing, m)
			}
		}
	}
	for _, tr := range h.cur {
		for _, iv := range tr.open {
			iv.To, iv.Open = res.To, true
			if h.match(iv) {
				h.out = append(h.out, *iv)
			}
		}
	}
	slices.SortFunc(h.out, func(a, b Interval) int {
		if c := a.From.Compare(b.From); c != 0 {
			return c
		}
		if a.Device != b.Device {
			return strings.Compare(a.Device.String(), b.Device.String())
		}
		return strings.Compare(string(a.Kernel), string(b.Kernel))
	})
	res.Intervals = h.out
	return res, nil
}
