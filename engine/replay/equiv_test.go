package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// sessionLine is a session as the equivalence tests compare it: every
// field the replay reads.
func sessionLine(s *Session) string {
	var got []string
	for slot, devs := range s.Alloc() {
		for dev, amt := range devs {
			got = append(got, fmt.Sprintf("%s/%s=%s", slot, dev, amt))
		}
	}
	slices.Sort(got)
	var req []string
	for slot, amt := range s.Requested {
		req = append(req, fmt.Sprintf("%s=%s", slot, amt))
	}
	slices.Sort(req)
	return fmt.Sprintf("%s agent=%s session=%s owner=%s %s..%s open=%v before=%v ingap=%v endsingap=%v changed=%v req[%s] got[%s]",
		s.Kernel, s.Agent, s.Session, s.Owner, s.Start.UTC().Format(time.RFC3339Nano), s.End.UTC().Format(time.RFC3339Nano),
		s.Open, s.Before, s.InGap, s.EndsInGap, s.Changed, strings.Join(req, ","), strings.Join(got, ","))
}

// sameSessions checks that the one-pass reader (Reader.Sessions, what
// Load uses) gives the replay the sessions History's intervals with the
// host's cpu and mem (the path Load took before) fold into, over
// [from, to), and returns how many.
func sameSessions(t *testing.T, rd *history.Reader, from, to time.Time) int {
	t.Helper()
	res, err := rd.History(history.Filter{Since: from, Until: to, Host: true})
	if err != nil {
		t.Fatal(err)
	}
	old := sessionsOfIntervals(res.Intervals, from, to)
	ks, err := rd.Sessions(from, to)
	if err != nil {
		t.Fatal(err)
	}
	now := sessionsOf(ks.Sessions, from, to, nil)
	t.Logf("%s..%s: %d segments taken from their folds", from, to, ks.Folded)
	if fmt.Sprint(ks.Missing) != fmt.Sprint(res.Missing) || fmt.Sprint(ks.Partitions) != fmt.Sprint(res.Partitions) {
		t.Errorf("%s..%s: gaps or journal differ:\nHistory  %v %v\nSessions %v %v", from, to, res.Missing, res.Partitions, ks.Missing, ks.Partitions)
	}
	var a, b []string
	for i := range old {
		a = append(a, sessionLine(&old[i]))
	}
	for i := range now {
		// History's intervals know what a kernel held, not what it asked
		// (SLOTS): compared is what the two know.
		s := now[i]
		s.Requested = requestOf(s.Alloc(), map[fixed]model.Dec{})
		b = append(b, sessionLine(&s))
	}
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("%s..%s: the sessions differ\nfrom History's intervals:\n%s\nfrom Sessions:\n%s", from, to, strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	return len(old)
}

// TestSessionsMatchIntervals: on the records of the replay's own tests
// (the scripted week, whole and in part, and the one with a gap) the
// one-pass reader gives the sessions History's intervals gave.
func TestSessionsMatchIntervals(t *testing.T) {
	w := scriptedWeek(t)
	rd := w.reader()
	from, to, err := rd.Span()
	if err != nil {
		t.Fatal(err)
	}
	if n := sameSessions(t, rd, from, to); n != 5 {
		t.Errorf("%d sessions in the scripted week, want 5", n)
	}
	for _, span := range [][2]time.Duration{{3*h + 30*time.Minute, 8 * h}, {2 * h, 4 * h}, {90 * time.Minute, 31 * h}, {5 * h, 6 * h}} {
		sameSessions(t, rd, w.base.Add(span[0]), w.base.Add(span[1]))
	}

	g := newWeek(t, "2.5", "1.5")
	g.start(1*h, agentA, 1, share(0, "0.5"))
	g.at(10 * h)
	g.observe(func(*model.Snapshot) error { return nil })
	if err := g.rec.Close(); err != nil {
		t.Fatal(err)
	}
	g.rec = nil
	g.start(12*h, agentA, 2, share(1, "1.0"))
	g.stop(13*h, agentA, 2)
	g.start(15*h, agentB, 3, share(2, "1.0"))
	g.at(20 * h)
	g.rec, err = history.Open(history.Options{Dir: g.dir, FlushEvery: time.Millisecond, Clock: func() time.Time { return time.Unix(0, g.now.Load()) }, Keep: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	g.observe(func(*model.Snapshot) error { return nil })
	grd := g.reader()
	gFrom, gTo, err := grd.Span()
	if err != nil {
		t.Fatal(err)
	}
	if n := sameSessions(t, grd, gFrom, gTo); n != 2 {
		t.Errorf("%d sessions in the record with a gap, want 2", n)
	}
	sameSessions(t, grd, g.base.Add(11*h), g.base.Add(30*h))
}

// writeRecovery writes kernel kid's recovery.json under root, as the
// agent does a moment after its resource.txt: the fixture's document
// with the kernel's id, session, owner and agent.
func writeRecovery(t *testing.T, root, kid, user, agent string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(enginetest.Fixtures(t), "recovery.numa0-batch.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["id"], doc["agent_id"] = kid, agent
	own := doc["ownership_data"].(map[string]any)
	own["kernel_id"], own["agent_id"], own["owner_user_id"] = kid, agent, user
	own["session_id"] = "5e55" + kid[4:]
	own["owner_project_id"] = "9a0c" + user[4:]
	out, _ := json.Marshal(doc)
	p := filepath.Join(root, kid, "config", "recovery.json")
	if err := os.WriteFile(p+".tmp", out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
}

// TestSessionsMatchIntervalsChurning: a real engine follows a scratch
// tree that churns (kernels whose owner and agent come late in their
// recovery.json, amounts that grow, shrink and move while they run,
// CPU-only kernels, a kernel id that comes back after it left, the
// recorder stopped and started again, segments rotating every second),
// and over the whole record and spans cut inside it the one-pass reader
// gives the sessions History's intervals gave.
func TestSessionsMatchIntervalsChurning(t *testing.T) {
	if testing.Short() {
		t.Skip("follows a churning tree for a few seconds")
	}
	dir, root := t.TempDir(), t.TempDir()
	files := enginetest.NewFiles(t)
	devs := []model.DeviceID{"0", "1", "2", "3"}
	users := []string{"11111111-aaaa-4000-8000-000000000001", "22222222-bbbb-4000-8000-000000000002"}
	rng := rand.New(rand.NewPCG(27, uint64(time.Now().UnixNano())))
	var late []string
	live := map[string]bool{}
	next := 0
	write := func(id string, withOwner bool) {
		enginetest.MustWriteKernel(t, root, id, files.Random(root, id, devs, rng))
		live[id] = true
		if withOwner {
			writeRecovery(t, root, id, users[rng.IntN(len(users))], "i-rec")
		} else {
			late = append(late, id)
		}
	}
	for range 5 {
		write(enginetest.KernelID(next), rng.IntN(2) == 0)
		next++
	}
	lv := enginetest.Start(t, engine.Options{Roots: []scratch.Root{{Path: root}}, Inventory: enginetest.MockSource(t),
		Node: "node-churn", PollEvery: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := lv.Eng.Subscribe(ctx)
	opts := history.Options{Dir: dir, CheckpointEvery: time.Second}
	rec, err := history.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	take := func(wait time.Duration) {
		deadline := time.After(wait)
		for {
			select {
			case s := <-ch:
				rec.Observe(s)
				if err := rec.Flush(); err != nil {
					t.Fatal(err)
				}
			case <-deadline:
				return
			}
		}
	}
	take(150 * time.Millisecond)
	for step := range 60 {
		switch op := rng.IntN(12); {
		case op < 3:
			write(enginetest.KernelID(next), rng.IntN(3) == 0)
			next++
		case op < 5 && len(late) > 0:
			i := rng.IntN(len(late))
			if live[late[i]] {
				writeRecovery(t, root, late[i], users[rng.IntN(len(users))], "i-rec")
			}
			late = slices.Delete(late, i, i+1)
		case op < 8:
			// What a running kernel holds changes.
			if id := enginetest.KernelID(rng.IntN(next)); live[id] {
				enginetest.MustWriteKernel(t, root, id, files.Random(root, id, devs, rng))
			}
		case op < 10:
			id := enginetest.KernelID(rng.IntN(next))
			os.RemoveAll(filepath.Join(root, id))
			delete(live, id)
		case op < 11:
			// A kernel id that left comes back.
			if id := enginetest.KernelID(rng.IntN(next)); !live[id] {
				write(id, true)
			}
		}
		if step == 30 {
			rec.Close()
			take(200 * time.Millisecond)
			if rec, err = history.Open(opts); err != nil {
				t.Fatal(err)
			}
		}
		take(time.Duration(50+rng.IntN(60)) * time.Millisecond)
	}
	take(300 * time.Millisecond)
	rec.Close()
	cancel()
	rd, err := history.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	from, to, err := rd.Span()
	if err != nil {
		t.Fatal(err)
	}
	if n := sameSessions(t, rd, from, to); n < 10 {
		t.Fatalf("%d sessions: the churn did not happen", n)
	}
	span := to.Sub(from)
	// The run fed as the record is read is the run after the read, here
	// too (owners learnt late, kernels coming back, a gap), whole and cut
	// at random, its notes handed over one by one and in batches.
	stood := 0
	followed := func(a, b time.Time) {
		for _, every := range []int{1, 2 + rng.IntN(8), 0} {
			why := followedAgrees(t, fmt.Sprintf("the churning record %s..%s", a, b), rd, a, b, Options{Word: rng.IntN(3)}, every)
			if why == "" {
				stood++
			}
			t.Logf("%s..%s every %d: made again: %q", a, b, every, why)
		}
	}
	followed(from, to)
	for i := range 6 {
		a := from.Add(span * time.Duration(i) / 7)
		b := a.Add(span * time.Duration(1+rng.IntN(4)) / 8)
		sameSessions(t, rd, a, b)
		followed(a, b)
	}
	t.Logf("the fed run stood in %d of 21 runs", stood)
	// The cheap refusal before the allocator's attempt answers as the
	// attempt does on this record too (TestShortRefusalAgrees).
	rp, err := Load(rd, from, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Record{rp, oneGPU(rp)} {
		for _, part := range []Partition{r.AsItWas(), Fixed(r.Epochs[len(r.Epochs)-1].Agents)} {
			for _, o := range allOptions() {
				runsAgree(t, fmt.Sprintf("the churning record, %d devices, %+v", len(r.Devices), o), r, part, o)
			}
		}
	}
}

// TestSessionsMatchIntervalsBench compares the two on the bench week
// (FGTOP_REPLAY_BENCH_DIR, as TestReplayBench): a minute of CPU for the
// old path.
func TestSessionsMatchIntervalsBench(t *testing.T) {
	dir := os.Getenv("FGTOP_REPLAY_BENCH_DIR")
	if dir == "" {
		t.Skip("set FGTOP_REPLAY_BENCH_DIR to a history directory")
	}
	rd, err := history.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	from, to, err := rd.Span()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d sessions", sameSessions(t, rd, from, to))
}

// TestCountingRunAgrees: the suggestion's counting runs (no reasons, no
// list) refuse as many sessions as a full run, over partitions from one
// that refuses most to one that refuses none, and the mean use settled
// at each change is the one accounted at every event (checked by hand
// in TestScriptedWeek: 0.02).
func TestCountingRunAgrees(t *testing.T) {
	w := scriptedWeek(t)
	rec := loadWhole(t, w.reader())
	seen := map[int]bool{}
	for _, amt := range []string{"0.1", "0.5", "1.0", "1.5", "2.0", "2.5", "4.0"} {
		part := given(rec, map[model.AgentID]string{agentA: amt, agentB: amt})
		full := Run(rec, Fixed(part), Options{NoElsewhere: true})
		counted := Run(rec, Fixed(part), Options{NoElsewhere: true, count: true})
		if counted.refused != len(full.Refused) || full.refused != len(full.Refused) || len(counted.Refused) != 0 {
			t.Errorf("%s each: counted %d, listed %d (%d in the full run's count, %d listed by the counting run)",
				amt, counted.refused, len(full.Refused), full.refused, len(counted.Refused))
		}
		for i := range full.Agents {
			for j := range full.Agents[i].Slots {
				if a, b := full.Agents[i].Slots[j], counted.Agents[i].Slots[j]; fmt.Sprint(a) != fmt.Sprint(b) {
					t.Errorf("%s each: %s %s: full %+v, counting %+v", amt, full.Agents[i].Agent, a.Slot, a, b)
				}
			}
		}
		seen[len(full.Refused)] = true
	}
	if len(seen) < 3 {
		t.Errorf("the partitions refused only %v: the comparison proves little", seen)
	}
}

// TestWordedRunAgrees: a run that words only the first refusals (the
// text's) refuses the same sessions, at the same moments, with the same
// slot lines as one that words them all; the first ones say the same
// reason and the same other agents; the text report of the two is the
// same byte for byte.
func TestWordedRunAgrees(t *testing.T) {
	w := scriptedWeek(t)
	rec := loadWhole(t, w.reader())
	unworded := 0
	for _, amt := range []string{"0.1", "0.5", "1.0", "1.5", "2.0", "2.5", "4.0"} {
		part := given(rec, map[model.AgentID]string{agentA: amt, agentB: amt})
		rec := rec
		if amt == "4.0" {
			// Past the amounts, on one GPU, only the device refuses:
			// the allocator's reasons (the costly ones) are left
			// unworded.
			one := *rec
			one.Devices = nil
			gpus := 0
			for _, d := range rec.Devices {
				if d.Name != "cuda" || gpus == 0 {
					one.Devices = append(one.Devices, d)
				}
				if d.Name == "cuda" {
					gpus++
				}
			}
			rec = &one
			for i := range part {
				part[i].Given[model.SlotCUDAShares] = model.MustDec("100")
			}
		}
		full := Run(rec, Fixed(part), Options{})
		some := Run(rec, Fixed(part), Options{Word: 1})
		if len(full.Refused) != len(some.Refused) || fmt.Sprint(full.Agents[0].Slots, full.Agents[1].Slots) != fmt.Sprint(some.Agents[0].Slots, some.Agents[1].Slots) {
			t.Fatalf("%s: refused %d vs %d; slots %v vs %v", amt, len(full.Refused), len(some.Refused), full.Agents, some.Agents)
		}
		for i, a := range full.Agents {
			for j, r := range a.Refused {
				s := some.Agents[i].Refused[j]
				if r.Kernel != s.Kernel || !r.At.Equal(s.At) {
					t.Errorf("%s: refusal %d of %s: %s at %s vs %s at %s", amt, j, a.Agent, r.Kernel, r.At, s.Kernel, s.At)
				}
				if j == 0 && (r.Reason != s.Reason || r.Kind != s.Kind || fmt.Sprint(r.CouldRunOn) != fmt.Sprint(s.CouldRunOn)) {
					t.Errorf("%s: the first refusal of %s words %q %v, the full run %q %v", amt, a.Agent, s.Reason, s.CouldRunOn, r.Reason, r.CouldRunOn)
				}
				if s.Reason == Unworded {
					unworded++
				}
			}
		}
		var a, b strings.Builder
		NewDoc(rec, Run(rec, rec.AsItWas(), Options{Fidelity: true}), full).WriteText(&a)
		NewDoc(rec, Run(rec, rec.AsItWas(), Options{Fidelity: true, Word: Printed}), Run(rec, Fixed(part), Options{Word: Printed})).WriteText(&b)
		if a.String() != b.String() {
			t.Errorf("%s: the text differs:\n%s\n---\n%s", amt, a.String(), b.String())
		}
	}
	if unworded == 0 {
		t.Error("no refusal was left unworded: the comparison proves little")
	}
}

// TestTextListsTheFirstRefusals: an agent with more refusals than the
// text lists shows the first Printed of them, then how many more; the
// count in its verdict is all of them.
func TestTextListsTheFirstRefusals(t *testing.T) {
	w := scriptedWeek(t)
	rec := loadWhole(t, w.reader())
	// The week's first session of a, arriving 30 times over at once.
	var i int
	for i = range rec.Sessions {
		if rec.Sessions[i].Agent == agentA && !rec.Sessions[i].Before {
			break
		}
	}
	extra := make([]Session, 30)
	for j := range extra {
		extra[j] = rec.Sessions[i]
		extra[j].Kernel = model.KernelID(fmt.Sprintf("%s-copy%02d", rec.Sessions[i].Kernel, j))
	}
	rec.Sessions = slices.Concat(rec.Sessions[:i+1], extra, rec.Sessions[i+1:])
	part := given(rec, map[model.AgentID]string{agentA: "0.1", agentB: "4.0"})
	res := Run(rec, Fixed(part), Options{Word: Printed})
	n := len(agentOf(t, res, agentA).Refused)
	if n <= Printed {
		t.Fatalf("a refuses %d, not more than the %d listed", n, Printed)
	}
	var sb strings.Builder
	NewDoc(rec, Run(rec, rec.AsItWas(), Options{Fidelity: true, Word: Printed}), res).WriteText(&sb)
	text := sb.String()
	if b := len(agentOf(t, res, agentB).Refused); b != 0 {
		t.Fatalf("b refuses %d: the lines counted below would mix them", b)
	}
	listed := strings.Count(text, "\n  refused ")
	if listed != Printed || !strings.Contains(text, fmt.Sprintf("  ... and %d more refused (--json lists them all)\n", n-Printed)) || strings.Contains(text, Unworded) {
		t.Errorf("%d refusal(s) of %d listed for a:\n%s", listed, n, text)
	}
	if !strings.Contains(text, fmt.Sprintf("%s: %d of ", agentA, n)) {
		t.Errorf("a's verdict does not count all %d:\n%s", n, text)
	}
}

// TestRecordAgentNotTheRootsIsNoAgents: a kernel first recorded under its
// scratch root's agent whose recovery.json, read later, names an agent
// agent.toml does not list there is no agent's in the replay, as in
// History (recovery.json, not the directory, says whose a kernel is):
// its session names none, and the report's notes say so, naming it,
// rather than replaying it as the root's agent's.
func TestRecordAgentNotTheRootsIsNoAgents(t *testing.T) {
	for _, named := range []string{"i-stranger", "i-else"} {
		t.Run(named, func(t *testing.T) {
			dir, root, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
			files := enginetest.NewFiles(t)
			const user = "11111111-aaaa-4000-8000-000000000001"
			kid := enginetest.KernelID(7)
			lv := enginetest.Start(t, engine.Options{
				Roots:     []scratch.Root{{Path: root, Agent: "i-root"}, {Path: elsewhere, Agent: "i-else"}},
				Agents:    []model.Agent{{ID: "i-root", ScratchRoot: root}, {ID: "i-else", ScratchRoot: elsewhere}},
				Inventory: enginetest.MockSource(t), Node: "node-id", PollEvery: 20 * time.Millisecond})
			rec, err := history.Open(history.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			observe := func(what string, cond func(k *model.Kernel) error) {
				s := lv.Wait(t, what, 10*time.Second, func(s *model.Snapshot) error {
					for _, k := range s.Kernels() {
						if string(k.ID) == kid {
							return cond(k)
						}
					}
					return fmt.Errorf("kernel %s not seen", kid)
				})
				rec.Observe(s)
				if err := rec.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			enginetest.MustWriteKernel(t, root, kid, files.Resource(root, kid, []enginetest.Share{{Dev: "1", Amount: model.MustDec("0.3")}}))
			observe("the kernel under its root's agent", func(k *model.Kernel) error {
				if k.Agent != "i-root" || k.Record != nil {
					return fmt.Errorf("agent %q, record %v", k.Agent, k.Record)
				}
				return nil
			})
			time.Sleep(30 * time.Millisecond)
			writeRecovery(t, root, kid, user, named)
			observe("the kernel's recovery.json read", func(k *model.Kernel) error {
				if k.Record == nil || k.Agent != "" {
					return fmt.Errorf("agent %q, record %v", k.Agent, k.Record)
				}
				return nil
			})
			time.Sleep(30 * time.Millisecond)
			observe("the kernel still there", func(*model.Kernel) error { return nil })
			rec.Close()
			rd, err := history.OpenReader(dir)
			if err != nil {
				t.Fatal(err)
			}
			from, to, err := rd.Span()
			if err != nil {
				t.Fatal(err)
			}
			sameSessions(t, rd, from, to)
			// The run fed as the record is read, whose arrival note has
			// the root's agent, ends as the run after the read.
			for _, every := range []int{1, 0} {
				followedAgrees(t, "the kernel whose agent recovery.json took back", rd, from, to, Options{}, every)
			}
			r, err := Load(rd, from, to)
			if err != nil {
				t.Fatal(err)
			}
			var agents []string
			for _, s := range r.Sessions {
				if string(s.Kernel) == kid {
					agents = append(agents, fmt.Sprintf("%q", s.Agent))
				}
			}
			if len(agents) != 1 || agents[0] != `""` {
				t.Errorf("the replay's sessions of %s name the agents %v, want one naming none", kid, agents)
			}
			want := "1 session(s) of the record name no agent (no recovery.json said whose they were, or theirs named an agent agent.toml does not give their scratch root; the first: " + kid + ")"
			if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
				t.Errorf("the replay's notes\n%s\nsay nothing of %s: want one beginning %q", strings.Join(r.Notes, "\n"), kid, want)
			}
		})
	}
}
