package history

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// writeRecovery writes kernel kid's recovery.json under root, as the
// agent does a moment after its resource.txt: the fixture's document
// with the kernel's own id, session, owner, project and agent.
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
	if user != "" {
		own["owner_project_id"] = "9a0c" + user[4:]
	} else {
		// A system kernel: no owner, no project, for good.
		own["owner_user_id"], own["owner_project_id"] = nil, nil
	}
	out, _ := json.Marshal(doc)
	p := filepath.Join(root, kid, "config", "recovery.json")
	if err := os.WriteFile(p+".tmp", out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
}

// holding is one kernel on one device as a reader tells it: amounts and
// who the kernel is.
func holdingLine(amounts model.ResourceSlot, user, session, project string, agent model.AgentID) string {
	var am []string
	for _, s := range amounts.Names() {
		am = append(am, string(s)+"="+amounts[s].String())
	}
	return fmt.Sprintf("%s user=%s session=%s project=%s agent=%s", strings.Join(am, ","), user, session, project, agent)
}

// covering is what the intervals say is held at t, by "kernel device".
func covering(ivs []Interval, t time.Time) map[string]string {
	out := map[string]string{}
	for _, iv := range ivs {
		if !t.Before(iv.From) && (t.Before(iv.To) || iv.Open && !t.After(iv.To)) {
			out[string(iv.Kernel)+" "+iv.Device.String()] = holdingLine(iv.Amounts, iv.User, iv.Session, iv.Project, iv.Agent)
		}
	}
	return out
}

// The differential property of issue 28: a real engine follows a real
// scratch tree that churns as a node does (kernels whose recovery.json,
// their owner, comes seconds after resource.txt; amounts changing;
// kernels leaving; the recorder killed and restarted), and at every
// recorded moment `snapshot --at` (At) and `history` by device, by user
// and by kernel tell the same holdings with the same owner, session,
// project and agent. Identity learnt late belongs to the whole kernel in
// both.
func TestHistoryAgreesWithSnapshotAt(t *testing.T) {
	if testing.Short() {
		t.Skip("follows a churning tree for a few seconds")
	}
	dir, root := t.TempDir(), t.TempDir()
	files := enginetest.NewFiles(t)
	devs := []model.DeviceID{"0", "1", "2", "3"}
	users := []string{"11111111-aaaa-4000-8000-000000000001", "22222222-bbbb-4000-8000-000000000002", "33333333-cccc-4000-8000-000000000003"}
	rng := rand.New(rand.NewPCG(28, seed()))
	var late []string // kernels without their recovery.json yet
	live := map[string]bool{}
	next := 0
	ownerOf := func() string {
		if rng.IntN(8) == 0 {
			return ""
		}
		return users[rng.IntN(len(users))]
	}
	newKernel := func(withOwner bool) {
		id := enginetest.KernelID(next)
		next++
		enginetest.MustWriteKernel(t, root, id, files.Random(root, id, devs, rng))
		live[id] = true
		if withOwner {
			writeRecovery(t, root, id, ownerOf(), "i-rec")
		} else {
			late = append(late, id)
		}
	}
	for range 6 {
		newKernel(rng.IntN(2) == 0)
	}
	// The root names no agent: a kernel's agent too is learnt from its
	// recovery.json.
	lv := enginetest.Start(t, engine.Options{Roots: []scratch.Root{{Path: root}}, Inventory: enginetest.MockSource(t),
		Node: "node-id", PollEvery: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := lv.Eng.Subscribe(ctx)
	// Segments rotate every 1.5 s: the readers also go from one segment
	// into the next it continues, besides the restarts.
	opts := Options{Dir: dir, CheckpointEvery: 1500 * time.Millisecond}
	rec, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	var moments []time.Time
	flush := true
	take := func(wait time.Duration) {
		deadline := time.After(wait)
		for {
			select {
			case s := <-ch:
				rec.Observe(s)
				if flush {
					if err := rec.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				moments = append(moments, s.Time)
			case <-deadline:
				return
			}
		}
	}
	take(150 * time.Millisecond)
	for step := range 70 {
		switch op := rng.IntN(10); {
		case op < 3:
			newKernel(rng.IntN(3) == 0)
		case op < 5 && len(late) > 0:
			// The owner arrives late.
			i := rng.IntN(len(late))
			if live[late[i]] {
				writeRecovery(t, root, late[i], ownerOf(), "i-rec")
			}
			late = slices.Delete(late, i, i+1)
		case op < 7:
			id := enginetest.KernelID(rng.IntN(next))
			if live[id] {
				enginetest.MustWriteKernel(t, root, id, files.Random(root, id, devs, rng))
			}
		case op < 9:
			id := enginetest.KernelID(rng.IntN(next))
			os.RemoveAll(filepath.Join(root, id))
			delete(live, id)
		}
		if step%25 == 24 {
			// Killed with a change or two not yet written, then started
			// again as a supervisor would.
			flush = false
			take(120 * time.Millisecond)
			kill(rec)
			if rec, err = Open(opts); err != nil {
				t.Fatal(err)
			}
			flush = true
		}
		take(time.Duration(60+rng.IntN(80)) * time.Millisecond)
	}
	take(300 * time.Millisecond)
	rec.Close()
	cancel()

	segs, err := listSegments(dir)
	if err != nil || len(segs) < 4 {
		t.Fatalf("%d segments (%v): the restarts and rotations did not happen", len(segs), err)
	}
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	byDev := map[string][]Interval{}
	for _, d := range devs {
		res, err := rd.History(Filter{Device: "cuda:" + string(d)})
		if err != nil {
			t.Fatal(err)
		}
		byDev["cuda:"+string(d)] = res.Intervals
	}
	byUser := map[string][]Interval{}
	for _, u := range users {
		res, err := rd.History(Filter{User: u})
		if err != nil {
			t.Fatal(err)
		}
		byUser[u] = res.Intervals
	}
	byKernel := map[string][]Interval{}
	compared, owned, learntLate := 0, 0, 0
	// Each moment seen, and halfway to the next.
	var at []time.Time
	for i, m := range moments {
		at = append(at, m)
		if i+1 < len(moments) {
			at = append(at, m.Add(moments[i+1].Sub(m)/2))
		}
	}
	for _, m := range at {
		res, err := rd.At(m)
		if err != nil || !res.Exact {
			continue
		}
		want := map[string]string{}
		wantUser := map[string]map[string]string{}
		wantKernel := map[string]map[string]string{}
		for _, k := range res.Snap.Kernels() {
			per := map[model.DeviceKey]model.ResourceSlot{}
			k.Alloc.EachHeld(func(key model.DeviceKey, slot model.SlotName, amt model.Dec) {
				if per[key] == nil {
					per[key] = model.ResourceSlot{}
				}
				per[key][slot] = amt
			})
			var user, session, project string
			if r := k.Record; r != nil {
				user, session, project = r.OwnerUserID, r.SessionID, r.OwnerProjectID
			}
			for key, am := range per {
				line := holdingLine(am, user, session, project, k.Agent)
				kd := string(k.ID) + " " + key.String()
				want[kd] = line
				if wantUser[user] == nil {
					wantUser[user] = map[string]string{}
				}
				wantUser[user][kd] = line
				if wantKernel[string(k.ID)] == nil {
					wantKernel[string(k.ID)] = map[string]string{}
				}
				wantKernel[string(k.ID)][kd] = line
				if user != "" {
					owned++
				}
			}
		}
		gotDev := map[string]string{}
		for _, ivs := range byDev {
			for kd, line := range covering(ivs, m) {
				gotDev[kd] = line
			}
		}
		if d := diffHeld(want, gotDev); d != "" {
			t.Fatalf("at %s: history --device and snapshot --at differ:\n%s", m.Format(time.RFC3339Nano), d)
		}
		for _, u := range users {
			if d := diffHeld(wantUser[u], covering(byUser[u], m)); d != "" {
				t.Fatalf("at %s: history --user %s and snapshot --at differ:\n%s", m.Format(time.RFC3339Nano), u, d)
			}
		}
		for kid := range wantKernel {
			ivs, ok := byKernel[kid]
			if !ok {
				r, err := rd.History(Filter{Kernel: kid})
				if err != nil {
					t.Fatal(err)
				}
				ivs = r.Intervals
				byKernel[kid] = ivs
			}
			if d := diffHeld(wantKernel[kid], covering(ivs, m)); d != "" {
				t.Fatalf("at %s: history --kernel %s and snapshot --at differ:\n%s", m.Format(time.RFC3339Nano), kid, d)
			}
		}
		compared++
	}
	// The walk must have met what it is about: late owners among the
	// holdings, and enough moments.
	for _, ivs := range byDev {
		for _, iv := range ivs {
			if iv.User != "" && !iv.Since {
				learntLate++
			}
		}
	}
	t.Logf("%d moments compared over %d segments, %d owned holdings, %d kernels", compared, len(segs), owned, next)
	if compared < 60 || owned == 0 || learntLate == 0 {
		t.Fatalf("%d moments compared, %d owned holdings: the churn did not exercise the property", compared, owned)
	}
}

func diffHeld(want, got map[string]string) string {
	var out []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			out = append(out, fmt.Sprintf("  snapshot: %s %s; history: nothing", k, v))
		} else if g != v {
			out = append(out, fmt.Sprintf("  snapshot: %s %s; history: %s", k, v, g))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("  history: %s %s; snapshot: nothing", k, v))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// seed is FGTOP_IDENTITY_SEED, or 2: other seeds walk other churns.
func seed() uint64 {
	n, err := strconv.ParseUint(os.Getenv("FGTOP_IDENTITY_SEED"), 10, 64)
	if err != nil {
		return 2
	}
	return n
}

// learntAgentCases are records of a kernel first recorded under its
// scratch root's agent (resource.txt alone) whose recovery.json, read
// later, names an agent that cannot be its there: one agent.toml does
// not list, or one whose scratch root is elsewhere.
var learntAgentCases = []struct {
	name, agent string
	// every: the recorder's CheckpointEvery; a short one puts the
	// record's arrival in the next segment's checkpoint.
	every time.Duration
}{
	{"agent not listed", "i-stranger", 0},
	{"agent of another root", "i-else", 0},
	{"agent not listed learnt across a rotation", "i-stranger", 10 * time.Millisecond},
}

// learntAgentRecord records, with a real engine over a real scratch tree,
// kernel kid of user first under its root's agent i-root (before: the
// snapshot), then with its recovery.json naming agent (after: the
// snapshot that read it), into dir, and closes the record.
func learntAgentRecord(t *testing.T, agent string, every time.Duration) (dir, kid, user string, before, after *model.Snapshot) {
	t.Helper()
	dir, root, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	files := enginetest.NewFiles(t)
	user = "11111111-aaaa-4000-8000-000000000001"
	kid = enginetest.KernelID(7)
	lv := enginetest.Start(t, engine.Options{
		Roots:     []scratch.Root{{Path: root, Agent: "i-root"}, {Path: elsewhere, Agent: "i-else"}},
		Agents:    []model.Agent{{ID: "i-root", ScratchRoot: root}, {ID: "i-else", ScratchRoot: elsewhere}},
		Inventory: enginetest.MockSource(t), Node: "node-id", PollEvery: 20 * time.Millisecond})
	rec, err := Open(Options{Dir: dir, CheckpointEvery: every})
	if err != nil {
		t.Fatal(err)
	}
	observe := func(what string, cond func(k *model.Kernel) error) *model.Snapshot {
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
		return s
	}
	enginetest.MustWriteKernel(t, root, kid, files.Resource(root, kid, []enginetest.Share{{Dev: "1", Amount: model.MustDec("0.3")}}))
	before = observe("the kernel under its root's agent", func(k *model.Kernel) error {
		if k.Agent != "i-root" || k.Record != nil || len(k.Alloc[model.SlotCUDAShares]) == 0 {
			return fmt.Errorf("agent %q, record %v, holding %v", k.Agent, k.Record, k.Alloc)
		}
		return nil
	})
	time.Sleep(30 * time.Millisecond)
	writeRecovery(t, root, kid, user, agent)
	after = observe("the kernel's recovery.json read", func(k *model.Kernel) error {
		if k.Record == nil || k.Agent != "" || len(k.Alloc[model.SlotCUDAShares]) == 0 {
			return fmt.Errorf("agent %q, record %v", k.Agent, k.Record)
		}
		return nil
	})
	if !after.Time.After(before.Time) {
		t.Fatalf("the record was read at %s, not after %s", after.Time, before.Time)
	}
	// The kernel goes on holding after the record was read, so that a
	// span may begin there.
	time.Sleep(30 * time.Millisecond)
	observe("the kernel still there", func(k *model.Kernel) error { return nil })
	rec.Close()
	if segs, err := listSegments(dir); err != nil || every > 0 && len(segs) < 2 {
		t.Fatalf("%d segments (%v): the rotation did not happen", len(segs), err)
	}
	return dir, kid, user, before, after
}

// A kernel first recorded under its scratch root's agent whose
// recovery.json, read later, names an agent that cannot be its there is
// no agent's, from its first moment: recovery.json, not the directory,
// says whose a kernel is. history lists its stay on a device as one row
// with the agent recovery.json leaves it (none), by kernel, by device and
// by owner; snapshot --at before the record was read keeps the agent the
// engine attributed it to then (its totals counted it), with the owner
// learnt later.
func TestRecordLearntAgentIsTheWholeKernels(t *testing.T) {
	for _, tc := range learntAgentCases {
		t.Run(tc.name, func(t *testing.T) {
			dir, kid, user, before, _ := learntAgentRecord(t, tc.agent, tc.every)
			rd, err := OpenReader(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []struct {
				by string
				f  Filter
			}{{"--kernel", Filter{Kernel: kid}}, {"--device", Filter{Device: "cuda:1"}}, {"--user", Filter{User: user}}} {
				res, err := rd.History(q.f)
				if err != nil {
					t.Fatal(err)
				}
				var rows []string
				for _, iv := range res.Intervals {
					if string(iv.Kernel) == kid {
						rows = append(rows, fmt.Sprintf("%s from %s: %s", iv.Device, iv.From.Format(time.RFC3339Nano),
							holdingLine(iv.Amounts, iv.User, iv.Session, iv.Project, iv.Agent)))
					}
				}
				if len(rows) != 1 || res.Intervals[0].Agent != "" || res.Intervals[0].User != user || !res.Intervals[0].From.Equal(before.Time) {
					t.Errorf("history %s: want one row from %s, of %s, no agent; got\n%s", q.by, before.Time.Format(time.RFC3339Nano), user, strings.Join(rows, "\n"))
				}
			}
			at, err := rd.At(before.Time)
			if err != nil {
				t.Fatal(err)
			}
			k := at.Snap.Kernel(model.KernelID(kid))
			if k == nil || k.Agent != "i-root" || k.Record == nil || k.Record.OwnerUserID != user {
				t.Errorf("snapshot --at before the record was read: %+v, want agent i-root and owner %s", k, user)
			}
		})
	}
}

// The sessions reader (plan --replay's) says of such a kernel what the
// interval reader says (no agent's, from the moment it was first seen,
// over the whole record), there and over a span that begins after its
// recovery.json was read (the stay rebased there) and one that ends
// before (followed past the span's end), walking every segment and
// taking the sealed ones from their folds.
func TestSessionsLearntAgentIsTheIntervals(t *testing.T) {
	for _, tc := range learntAgentCases {
		t.Run(tc.name, func(t *testing.T) {
			dir, kid, _, before, after := learntAgentRecord(t, tc.agent, tc.every)
			rd, err := OpenReader(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, span := range []struct {
				name         string
				since, until time.Time
			}{
				{"the whole record", time.Time{}, time.Time{}},
				{"from after the record was read", after.Time.Add(time.Millisecond), time.Time{}},
				{"to before the record was read", time.Time{}, before.Time.Add(after.Time.Sub(before.Time) / 2)},
			} {
				res, err := rd.History(Filter{Since: span.since, Until: span.until, Host: true})
				if err != nil {
					t.Fatal(err)
				}
				var want string
				var from, to time.Time
				open := false
				for _, iv := range res.Intervals {
					if string(iv.Kernel) != kid {
						continue
					}
					if from.IsZero() || iv.From.Before(from) {
						from, want = iv.From, string(iv.Agent)
					}
					if iv.To.After(to) {
						to = iv.To
					}
					open = open || iv.Open
				}
				if from.IsZero() {
					t.Fatalf("%s: History has no interval of %s", span.name, kid)
				}
				// Cut spans read what the segments they touch say (the
				// record may be read in one History does not read): there
				// the two readers are only to agree.
				if span.since.IsZero() && span.until.IsZero() && (want != "" || !from.Equal(before.Time)) {
					t.Errorf("%s: History has %s from %s under agent %q, want from %s under none", span.name, kid, from, want, before.Time)
				}
				for _, folds := range []bool{false, true} {
					rd.noFolds = !folds
					ss, err := rd.Sessions(span.since, span.until)
					rd.noFolds = false
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, s := range ss.Sessions {
						if string(s.Kernel) == kid {
							got = append(got, fmt.Sprintf("agent %q from %s to %s open=%v", s.Agent, s.From.Format(time.RFC3339Nano), s.To.Format(time.RFC3339Nano), s.Open))
						}
					}
					w := fmt.Sprintf("agent %q from %s to %s open=%v", want, from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), open)
					if len(got) != 1 || got[0] != w {
						t.Errorf("%s (folds %v, %d taken): Sessions has %s as\n%s\nHistory's intervals as\n%s", span.name, folds, ss.Folded, kid, strings.Join(got, "\n"), w)
					}
				}
			}
		})
	}
}
