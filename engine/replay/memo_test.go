package replay

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// memoAgrees runs rec under part with opts with the manager's limit kept
// and its answers given again (managerRefusal), and with the limit made
// anew and asked at every arrival, and fails unless the two results are
// the same in every field. It returns how many answers were given again.
func memoAgrees(t *testing.T, what string, rec *Record, part Partition, opts Options) int {
	t.Helper()
	kept := Run(rec, part, opts)
	opts.noMemo = true
	fresh := Run(rec, part, opts)
	if fresh.memoHits != 0 {
		t.Fatalf("%s: the reference run gave %d answers again", what, fresh.memoHits)
	}
	n := kept.memoHits
	kept.memoHits = 0
	if a, b := fmt.Sprintf("%+v", *kept), fmt.Sprintf("%+v", *fresh); a != b {
		t.Fatalf("%s: with the limit kept\n%s\nasked anew\n%s", what, a, b)
	}
	return n
}

// TestManagerMemoAgrees: keeping the manager's limit between the changes
// of what an agent holds, and its answer to each request asked again,
// changes no answer. Random weeks of the scripted week's node, whose
// requests repeat amounts in other forms (0.5 and 0.50, printed apart by
// the manager's words), ask a second given slot (cpu) besides the
// shares, under amounts from none to all and a partition change inside
// the span, in every kind of run the replay makes; some answers were
// given again, or the test proves nothing.
func TestManagerMemoAgrees(t *testing.T) {
	rec := loadWhole(t, scriptedWeek(t).reader())
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 3))
	again := 0
	forms := []string{"0.5", "0.50", "0.25", "0.250", "1", "1.0", "0.125"}
	for round := range 40 {
		r := randomWeek(rec, rng)
		for i := range r.Sessions {
			s := &r.Sessions[i]
			if rng.IntN(2) == 0 {
				// A repeated amount, in one of its forms.
				s.Requested = model.ResourceSlot{model.SlotCUDAShares: model.MustDec(forms[rng.IntN(len(forms))])}
			}
			if rng.IntN(3) == 0 {
				req := model.ResourceSlot{model.SlotCPU: model.Zero}
				for k, v := range s.Requested {
					req[k] = v
				}
				s.Requested = req
				s.Requested[model.SlotCPU] = model.NewDec(int64(1+rng.IntN(4)), 0)
			}
		}
		amts := map[model.AgentID]string{}
		for _, a := range []model.AgentID{agentA, agentB} {
			amts[a] = fmt.Sprintf("%d.%d", rng.IntN(3), rng.IntN(10))
		}
		agents := given(r, amts)
		for i := range agents {
			if rng.IntN(2) == 0 {
				agents[i].Given[model.SlotCPU] = model.NewDec(int64(rng.IntN(8)), 0)
			}
		}
		part := Fixed(agents)
		if rng.IntN(3) == 0 {
			part = Partition{{Agents: agents}, {At: r.From.Add(r.To.Sub(r.From) / 2), Agents: r.Epochs[0].Agents}}
		}
		for _, o := range allOptions() {
			again += memoAgrees(t, fmt.Sprintf("seed %d round %d %v %+v", seed, round, amts, o), r, part, o)
		}
	}
	if again == 0 {
		t.Fatalf("seed %d: no answer of the manager was given again", seed)
	}
	t.Logf("seed %d: %d answers of the manager given again", seed, again)
}
