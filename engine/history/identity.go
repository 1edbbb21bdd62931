package history

import (
	"slices"
	"strings"
	"time"

	"github.com/fgtop/fgtop/model"
)

// identity is who a kernel is: its agent, session, owner and project.
// The agent writes resource.txt first and recovery.json (the owner) a
// moment later, so a kernel is often first recorded without them; what
// it learns later is true of the whole kernel. That includes its agent:
// until recovery.json is read the engine takes its scratch root's agent,
// but the record's agent_id is whose it is (several agents may share a
// root), and one naming an agent that cannot be its leaves it no agent's.
type identity struct {
	Agent                  model.AgentID
	Session, User, Project string
}

// known: the kernel's recovery record is known (every record names a
// session; its owner and project may be null, and stay so), and with it
// its agent, which may be none (a record naming an agent agent.toml does
// not list). Until then what it learns is kept for the whole kernel.
func (kh *kernelHead) known() bool { return kh.Session != "" }

// learn keeps what kh says of its kernel's identity, over what was
// learnt before.
func (h *histWalk) learn(kh kernelHead) {
	if h.ident == nil {
		h.ident = map[model.KernelID]identity{}
	}
	id := h.ident[kh.ID]
	id.take(identity{Agent: kh.Agent, Session: kh.Session, User: kh.User, Project: kh.Project})
	h.ident[kh.ID] = id
}

// take sets what o knows over what id knows. An o that knows the
// kernel's record knows its agent too, even when that is none.
func (id *identity) take(o identity) {
	if o.Agent != "" || o.Session != "" {
		id.Agent = o.Agent
	}
	if o.Session != "" {
		id.Session = o.Session
	}
	if o.User != "" {
		id.User = o.User
	}
	if o.Project != "" {
		id.Project = o.Project
	}
}

// fill gives iv what its kernel learnt of who it is where iv lacks it.
// An interval from before the kernel's record was read (no session)
// takes the record's agent over the scratch root's the engine gave it
// then: one stay is one row, whose as recovery.json says.
func (id identity) fill(iv *Interval) {
	if iv.Agent == "" || iv.Session == "" && id.Session != "" {
		iv.Agent = id.Agent
	}
	if iv.Session == "" {
		iv.Session = id.Session
	}
	if iv.User == "" {
		iv.User = id.User
	}
	if iv.Project == "" {
		iv.Project = id.Project
	}
}

// mergeIdent takes a later walk's learnt identities into h's.
func (h *histWalk) mergeIdent(later map[model.KernelID]identity) {
	for k, o := range later {
		if h.ident == nil {
			h.ident = map[model.KernelID]identity{}
		}
		id := h.ident[k]
		id.take(o)
		h.ident[k] = id
	}
}

// settle gives the intervals their kernels' identities, joins the pieces
// a kernel's learning split (one interval for one holding, as if its
// identity had been known from the start) and keeps what f asks for.
func settle(ivs []Interval, ident map[model.KernelID]identity, f Filter) ([]Interval, []string) {
	if len(ident) > 0 {
		split := false
		for i := range ivs {
			iv := &ivs[i]
			if iv.Agent != "" && iv.Session != "" && iv.User != "" && iv.Project != "" {
				continue
			}
			if id, ok := ident[iv.Kernel]; ok {
				id.fill(iv)
				split = true
			}
		}
		if split {
			ivs = join(ivs)
		}
	}
	matched := f.matched(ivs)
	if want, _ := f.whoField(); want == "" && f.Since.IsZero() && f.Until.IsZero() {
		return ivs, matched
	}
	return slices.DeleteFunc(ivs, func(iv Interval) bool { return !f.final(&iv) }), matched
}

// matched lists the kernels, users, sessions or projects the filter's
// id or prefix names among ivs (before the asked span is applied: a
// prefix that names two in the record is ambiguous even where only one
// held anything in the span).
func (f Filter) matched(ivs []Interval) []string {
	want, field := f.whoField()
	if field == nil && f.Kernel == "" {
		return nil
	}
	var out []string
	for i := range ivs {
		iv := &ivs[i]
		v := string(iv.Kernel)
		if field != nil {
			v = field(iv.User, iv.Session, iv.Project)
			if !strings.HasPrefix(v, want) {
				continue
			}
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// join merges each interval into the one before it of the same kernel
// and device when it took over at the same moment with the same amounts
// and identity.
func join(ivs []Interval) []Interval {
	slices.SortFunc(ivs, func(a, b Interval) int {
		if c := strings.Compare(string(a.Kernel), string(b.Kernel)); c != 0 {
			return c
		}
		if a.Device != b.Device {
			return strings.Compare(a.Device.String(), b.Device.String())
		}
		return a.From.Compare(b.From)
	})
	out := ivs[:0]
	for _, iv := range ivs {
		if n := len(out); n > 0 {
			p := &out[n-1]
			if p.Kernel == iv.Kernel && p.Device == iv.Device && !p.Open && !p.Gone && !iv.Since && p.To.Equal(iv.From) &&
				p.Agent == iv.Agent && p.Session == iv.Session && p.User == iv.User && p.Project == iv.Project && sameSlots(p.Amounts, iv.Amounts) {
				p.To, p.Open, p.Gone = iv.To, iv.Open, iv.Gone
				continue
			}
		}
		out = append(out, iv)
	}
	return out
}

// snapIdentity is who a snapshot's kernel k is, as far as it knows.
func snapIdentity(k *model.Kernel) identity {
	id := identity{Agent: k.Agent}
	if r := k.Record; r != nil {
		id.Session, id.User, id.Project = r.SessionID, r.OwnerUserID, r.OwnerProjectID
	}
	return id
}

// complete is kernelHead.known for a snapshot's kernel.
func (id identity) complete() bool { return id.Session != "" }

// noDevice is a device filter no allocation passes: the look-ahead needs
// a kernel's identity, not what it holds.
var noDevice = &devWant{name: "\x00", id: "\x00"}

// learnAhead gives the kernels of snap (the node at t, replayed from
// segment i) what they learn later of who they are, as History does: a
// kernel recorded before its recovery.json was is the owner's from its
// first moment. It reads on from t while a kernel of snap that lacks
// part of its identity is still there, and no further.
func (r *Reader) learnAhead(snap *model.Snapshot, i int, t time.Time) {
	pend := map[model.KernelID]*model.Kernel{}
	learnt := map[model.KernelID]identity{}
	for _, k := range snap.Kernels() {
		if snapIdentity(k).complete() {
			continue
		}
		pend[k.ID] = &model.Kernel{ID: k.ID, Agent: k.Agent, State: k.State, Record: k.Record}
		learnt[k.ID] = snapIdentity(k)
	}
	if len(pend) == 0 {
		return
	}
	in := newInterner()
	var idb []byte
	see := func(k *model.Kernel) {
		id := learnt[k.ID]
		id.take(snapIdentity(k))
		learnt[k.ID] = id
	}
	for j := i; j < len(r.segs) && len(pend) > 0; j++ {
		sr := r.readOf(j, false, true)
		if sr.err != nil || sr.data.Checkpoint == nil {
			continue
		}
		inCk := map[model.KernelID]bool{}
		var w walker
		w.onGroup = func(tm time.Time, grp []rawRec, ckpt bool) {
			if j == i && !tm.After(t) {
				return
			}
			for _, rr := range grp {
				d := dec{b: rr.body, in: in}
				idb = d.appendID(idb[:0])
				k := pend[model.KernelID(idb)]
				if d.err != nil || k == nil {
					continue
				}
				switch rr.typ {
				case recKernel:
					kh := decodeHeadRest(&d, k.ID, noDevice)
					if d.err != nil {
						continue
					}
					if ckpt {
						inCk[k.ID] = true
					}
					k.Agent, k.State, k.Record = kh.Agent, kh.State, nil
					if kh.Session != "" || kh.User != "" || kh.Project != "" {
						k.Record = &model.KernelRecord{SessionID: kh.Session, OwnerUserID: kh.User, OwnerProjectID: kh.Project}
					}
					see(k)
				case recKernelPatch:
					if decodePatchHead(&d, k, noDevice)&headFields != 0 && d.err == nil {
						see(k)
					}
				case recKernelGone:
					delete(pend, k.ID)
				}
				if snapIdentity(k).complete() {
					delete(pend, k.ID)
				}
			}
			// Known (or gone), as they mostly are within seconds: the
			// rest is not read (nor decompressed).
			w.halt = len(pend) == 0
		}
		w.scan(sr, nil, time.Time{})
		if j > i {
			// What the checkpoint lacks had gone before it.
			for id := range pend {
				if !inCk[id] {
					delete(pend, id)
				}
			}
		}
		for id, k := range pend {
			if snapIdentity(k).complete() {
				delete(pend, id)
			}
		}
	}
	agentOf := map[model.KernelID]model.AgentID{}
	for _, k := range snap.Kernels() {
		id, ok := learnt[k.ID]
		if !ok {
			continue
		}
		if k.Agent == "" && id.Agent != "" {
			k.Agent = id.Agent
			agentOf[k.ID] = id.Agent
		}
		if id.Session == "" && id.User == "" && id.Project == "" {
			continue
		}
		rec := model.KernelRecord{KernelID: k.ID, AgentID: k.Agent}
		if k.Record != nil {
			rec = *k.Record
		}
		if rec.SessionID == "" {
			rec.SessionID = id.Session
		}
		if rec.OwnerUserID == "" {
			rec.OwnerUserID = id.User
		}
		if rec.OwnerProjectID == "" {
			rec.OwnerProjectID = id.Project
		}
		k.Record = &rec
	}
	holdingAgents(snap, agentOf)
}

// holdingAgents gives the holdings of the kernels in agentOf their agent
// learnt later (the usages are copied: a published one is never changed).
func holdingAgents(snap *model.Snapshot, agentOf map[model.KernelID]model.AgentID) {
	if len(agentOf) == 0 {
		return
	}
	for key, u := range snap.Usage {
		hs := u.Holdings()
		var out []model.Holding
		for j, h := range hs {
			if a, ok := agentOf[h.Kernel]; ok && h.Agent == "" {
				if out == nil {
					out = slices.Clone(hs)
				}
				out[j].Agent = a
			}
		}
		if out != nil {
			cp := *u
			cp.SetHoldings(out)
			snap.Usage[key] = &cp
		}
	}
}
