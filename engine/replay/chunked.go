package replay

import (
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// A fidelity run follows the record: every session runs where it really
// ran, whatever the rules say of it, so what the node holds at any moment
// is the record's, not the run's. The rules' answer to one arrival then
// depends on nothing the run decided before it, and the run can be cut
// in chunks of time, each chunk on its own core. A chunk's run first
// walks every event before it without asking the rules (quietTo): what
// each agent's sessions hold and ask summed with the same additions in
// the same order as the whole run, the sessions running at its start
// loaded where they ran, each device's amount given the form the whole
// run's has; so its maps, sums and limits are the whole run's, in value
// and in form, when its own events begin. Its tallies then start from
// nothing (cut), and the chunks' tallies are put together as one run
// gives them (TestChunksAreTheRun).

// chunkMin is how many sessions a fidelity run has at least to be run in
// chunks: below it the quiet passes cost more than the cores save.
const chunkMin = 8192

// maxChunks bounds the chunks of one run: each chunk's quiet pass takes
// every event before it, so more chunks save less.
const maxChunks = 4

// quietCost is what an event taken quietly costs against one taken with
// the rules (a placement attempt and its free, the comparison), measured
// on the 10,000-kernel bench week: the chunks are cut so that each
// chunk's quiet pass and run together cost the same.
const quietCost = 0.1

// chunksOf is how many chunks the run of rec under part is cut in; 1 or
// less: none. Only a fidelity run under one partition, every session
// naming one of its agents (none is routed by what the others hold, and
// no agent is met that the partition lacks).
func chunksOf(rec *Record, part Partition, opts Options) int {
	if !opts.Fidelity || opts.serial || opts.count || len(part) != 1 || opts.chunkAt < 0 {
		return 0
	}
	at := opts.chunkAt
	if at == 0 {
		at = chunkMin
	}
	if len(rec.Sessions) < at {
		return 0
	}
	in := map[model.AgentID]bool{}
	for _, a := range part[0].Agents {
		in[a.ID] = true
	}
	for i := range rec.Sessions {
		a := rec.Sessions[i].Agent
		if a == "" && len(part[0].Agents) == 1 {
			continue
		}
		if !in[a] {
			return 0
		}
	}
	if opts.chunks > 0 {
		return opts.chunks
	}
	return min(runtime.GOMAXPROCS(0), maxChunks)
}

// sumsFit: every agent's use sum of every slot whose use it keeps stays
// below 10^26 at the least exponent of its amounts, and its amount's
// time sum below 28 digits (Dec's precision: the whole run's one product
// and the chunks' sum of theirs are then the same exact number): the
// chunks' sums are then put together exactly (joinChunks). Past it (a
// host's memory given to an agent, hundreds of GiB held for days) the
// chunks would all run and then the whole run again: such a run is run
// whole at once. The bound is each session's amount for as long as it
// runs in the span, the integral the use sum is; a hundredth of each cap
// leaves room for the float sum's rounding (a few parts in 10^11 over a
// week's 200,000 sessions). r has begun, under one partition that has
// every session's agent (chunksOf).
func (r *runner) sumsFit() bool {
	rec := r.rec
	span := float64(rec.To.Sub(rec.From))
	// The slots an amount can be given to: the devices', the given
	// ones, memory (amountOf).
	var cands []model.SlotName
	seen := map[model.SlotName]bool{model.SlotMem: true}
	cands = append(cands, model.SlotMem)
	for _, d := range rec.Devices {
		if !seen[d.Slot] {
			seen[d.Slot] = true
			cands = append(cands, d.Slot)
		}
	}
	for _, a := range r.agents {
		for slot := range a.agent.Given {
			if !seen[slot] {
				seen[slot] = true
				cands = append(cands, slot)
			}
		}
	}
	// Each agent's slots whose use it keeps (track: none of an amount of
	// none), and their bounds.
	type bound struct {
		slot model.SlotName
		sum  float64
		emin int32
	}
	kept := map[*agentRun][]bound{}
	for _, a := range r.agents {
		for _, slot := range cands {
			amt, _ := a.amountOf(slot)
			// Its time sum starts from 0: at exponent 0 where the
			// amount's is above it.
			if amt.CoeffFloat()*math.Pow10(int(max(amt.Exponent(), 0)))*span >= 0.99e28 {
				return false
			}
			if amt.Sign() != 0 {
				kept[a] = append(kept[a], bound{slot: slot})
			}
		}
	}
	for i := range rec.Sessions {
		s := &rec.Sessions[i]
		bs := kept[r.route(s)]
		if len(bs) == 0 {
			continue
		}
		from, to := s.Start, s.End
		if from.Before(rec.From) {
			from = rec.From
		}
		if s.Open || to.After(rec.To) {
			to = rec.To
		}
		dt := min(max(float64(to.Sub(from)), 0), span)
		for j := range bs {
			if v, ok := s.Requested[bs[j].slot]; ok {
				if v.Sign() < 0 || fixedOf(v).dec {
					// A damaged record's amount (negative, not a
					// machine integer): its sums take the decimal
					// path, which the chunks cannot join.
					return false
				}
				e := v.Exponent()
				bs[j].emin = min(bs[j].emin, e)
				bs[j].sum += dt * v.CoeffFloat() * math.Pow10(int(e))
			}
		}
	}
	for _, bs := range kept {
		for _, b := range bs {
			if b.sum*math.Pow10(int(-b.emin)) >= 0.99e26 {
				return false
			}
		}
	}
	return true
}

// chunkBounds cuts n events in k chunks whose quiet pass and run cost the
// same: chunk j runs events [b[j], b[j+1]) after b[j] quiet ones.
func chunkBounds(n, k int) []int {
	// Chunk j's cost is quietCost·b[j] + (b[j+1] − b[j]) = L for every
	// j, so b[j+1] = L + (1 − quietCost)·b[j] from b[0] = 0; L makes
	// b[k] = n.
	g := 1 - quietCost
	sum, pow := 0.0, 1.0
	for range k {
		sum += pow
		pow *= g
	}
	l := float64(n) / sum
	b := make([]int, k+1)
	x := 0.0
	for j := 1; j < k; j++ {
		x = l + g*x
		b[j] = min(max(int(x), b[j-1]), n)
	}
	b[k] = n
	return b
}

// runChunked is Run of a fidelity run in k chunks of time, nil where the
// chunks' tallies cannot be put together exactly (a use sum past machine
// integers or an amount's time sum near 28 digits, whose decimal sums
// round in the order they are made): Run then runs it whole. sumsFit
// finds them before the chunks run.
func runChunked(rec *Record, part Partition, opts Options, k int) *Result {
	opts.prepAt = -1
	first := &runner{rec: rec, part: part, opts: opts, res: &Result{From: rec.From, To: rec.To}}
	first.begin()
	if !first.sumsFit() {
		return nil
	}
	evs := first.events()
	b := chunkBounds(len(evs), k)
	runs := make([]*runner, k)
	var wg sync.WaitGroup
	for j := range k {
		wg.Go(func() {
			r := first
			if j > 0 {
				r = &runner{rec: rec, part: part, opts: opts, res: &Result{From: rec.From, To: rec.To}}
				r.begin()
			}
			r.chunk = true
			r.live = make([]*running, len(rec.Sessions))
			r.quietTo(evs[:b[j]])
			if j > 0 {
				r.cut()
			}
			for _, ev := range evs[b[j]:b[j+1]] {
				r.step(ev)
			}
			runs[j] = r
		})
	}
	wg.Wait()
	return joinChunks(runs, opts)
}

// quietTo takes the events before a chunk as the run does, without
// asking the rules of an arrival (it runs where it ran), and without
// loading each session into the maps and freeing it: only those running
// at the chunk's start are loaded. A map's amount keeps the finest form
// of every amount added to it and taken back (0.3 + 0.50 − 0.50 is
// 0.30), so each device is then given, as a zero, the finest form it was
// loaded with before: its amount is the whole run's in value and in form.
func (r *runner) quietTo(evs []event) {
	var order []int
	live := make([]bool, len(r.rec.Sessions))
	// Each agent's maps are its own (in the slot-based form every agent's
	// hold every device).
	finest := map[*agentRun]model.Allocations{}
	for _, ev := range evs {
		if ev.t.After(r.now) {
			r.now = ev.t
		}
		s := &r.rec.Sessions[ev.i]
		a := r.route(s)
		// What its sessions ask and hold, summed as the run sums them
		// (the same additions in the same order: the same forms); the
		// tallies of time (use, peaks, time over) are cut's to start.
		if ev.leave {
			for _, q := range r.reqOf(ev.i) {
				a.ask(q, true)
				a.hold(q, true)
			}
			a.lastLeave = r.now
			live[ev.i] = false
			continue
		}
		for _, q := range r.reqOf(ev.i) {
			a.track(q.slot, r.now, len(r.part) == 1)
			a.ask(q, false)
			a.hold(q, false)
		}
		live[ev.i] = true
		order = append(order, ev.i)
		fa := finest[a]
		if fa == nil {
			fa = model.Allocations{}
			finest[a] = fa
		}
		s.eachHeld(func(slot model.SlotName, id model.DeviceID, v model.Dec) {
			if !r.plugins[slot.DeviceName()] {
				return
			}
			f := fa[slot]
			if f == nil {
				f = map[model.DeviceID]model.Dec{}
				fa[slot] = f
			}
			if w, ok := f[id]; !ok || v.Apd().Exponent < w.Apd().Exponent {
				f[id] = v
			}
		})
	}
	for _, i := range order {
		if !live[i] {
			continue
		}
		s := &r.rec.Sessions[i]
		a := r.route(s)
		got, _ := r.load(a, s)
		r.live[i] = &running{s: s, agent: a, got: got}
	}
	for a, fa := range finest {
		for _, f := range fa {
			for id, v := range f {
				f[id] = model.NewDec(0, v.Apd().Exponent)
			}
		}
		a.st.Node.LoadOf(fa, r.listedPlugin)
	}
}

// cut starts the run's tallies from nothing at its moment: what came
// before is another chunk's.
func (r *runner) cut() {
	*r.res = Result{From: r.rec.From, To: r.rec.To}
	r.disagreed, r.disBlocks = 0, nil
	for _, a := range r.agents {
		a.res.Sessions = 0
		a.limitChanged()
		for _, acc := range a.stats {
			acc.mark, acc.amtMark = r.now, r.now
			acc.peak, acc.peakAt = fixed{}, time.Time{}
			acc.overPeak, acc.overAmt, acc.overAt = fixed{}, model.Dec{}, time.Time{}
			acc.over = 0
			acc.useSum = useSum{}
			acc.amtSum = model.Zero
		}
	}
}

// joinChunks puts the chunks' runs together as one run of them all gives
// them; nil where it cannot be exact. A fidelity run refuses nothing
// (Refused) and, every session naming an agent of the partition
// (chunksOf), routes every one (Unrouted): those stay the last chunk's.
func joinChunks(runs []*runner, opts Options) *Result {
	last := runs[len(runs)-1]
	nd, nw := 0, 0
	for _, r := range runs {
		nd += r.disagreed
		nw += len(r.allocWhy)
	}
	// Made once at their full size: appended chunk by chunk, a busy
	// week's 200,000 were copied onto fresh pages as the slice grew.
	var dis []Disagreement
	if nd > 0 {
		dis = make([]Disagreement, 0, nd)
		for _, r := range runs {
			for _, b := range r.disBlocks {
				dis = append(dis, b...)
			}
			r.disBlocks = nil
		}
	}
	allocWhy := make([]bool, 0, nw)
	var sessions, compared, sameMoment, skipped, short, memo int
	for _, r := range runs {
		allocWhy = append(allocWhy, r.allocWhy...)
		sessions += r.res.Sessions
		compared += r.res.Compared
		sameMoment += r.res.SameMoment
		skipped += r.res.Skipped
		short += r.res.short
		memo += r.res.memoHits
	}
	// A chunk words its own first disagreements; past the whole run's
	// first ones, the allocator's reasons are not worded.
	if opts.Word > 0 {
		for g := opts.Word; g < len(dis); g++ {
			if allocWhy[g] {
				dis[g].Refused = Unworded
			}
		}
	}
	// Each slot's tallies of the earlier chunks, settled at their ends,
	// go into the last chunk's, which the run's end settles at the span's
	// end. The chunks are in time order: the first of equal peaks is the
	// one reached first, as a run keeps it.
	for ai, la := range last.agents {
		for _, r := range runs[:len(runs)-1] {
			la.res.Sessions += r.agents[ai].res.Sessions
		}
		for slot, lacc := range la.stats {
			var accs []*slotAcc
			for _, r := range runs[:len(runs)-1] {
				a := r.agents[ai]
				if acc := a.stats[slot]; acc != nil {
					acc.settle(a.held[slot], r.now)
					acc.settleAmount(r.now)
					accs = append(accs, acc)
				}
			}
			if len(accs) == 0 {
				continue
			}
			accs = append(accs, lacc)
			use, amt, over := accs[0].useSum, accs[0].amtSum, accs[0].over
			peak, peakAt := accs[0].peak, accs[0].peakAt
			overPeak, overAmt, overAt := accs[0].overPeak, accs[0].overAmt, accs[0].overAt
			for _, acc := range accs[1:] {
				if !use.addSum(acc.useSum) {
					return nil
				}
				// A sum of Decs is exact, and so the same in any
				// order, below 28 digits; the amounts' time sums pass
				// that only with tens of terabytes for a week. An
				// exact one is at the exponent it is made at (from 0,
				// of the one amount: one partition); one rounded, the
				// chunk's or the join's, has a larger one.
				amt = amt.Add(acc.amtSum)
				if amt.Sign() != 0 && amt.Exponent() > min(0, lacc.amount.Exponent()) {
					return nil
				}
				over += acc.over
				if peak.cmp(acc.peak) < 0 {
					peak, peakAt = acc.peak, acc.peakAt
				}
				if overPeak.cmp(acc.overPeak) < 0 {
					overPeak, overAmt, overAt = acc.overPeak, acc.overAmt, acc.overAt
				}
			}
			lacc.useSum, lacc.amtSum, lacc.over, lacc.peak, lacc.peakAt = use, amt, over, peak, peakAt
			lacc.overPeak, lacc.overAmt, lacc.overAt = overPeak, overAmt, overAt
		}
	}
	out := last.end()
	out.Disagreements = dis
	out.Sessions, out.Compared, out.SameMoment, out.Skipped, out.short, out.memoHits = sessions, compared, sameMoment, skipped, short, memo
	return out
}

// allocKind: a refusal of this kind is the allocator's, whose reason a
// run words only for its first disagreements (place); the manager's and
// a missing agent's are always worded.
func allocKind(kind string) bool {
	return kind != placement.KindManagerRefused && kind != KindNoAgent
}
