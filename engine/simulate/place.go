package simulate

import (
	"fmt"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// Outcome is what the requests did.
type Outcome struct {
	Result *placement.Result
	// Unplaced counts the allocation requests not placed, Requests all of
	// them; FailedFrees the frees that failed.
	Unplaced, Requests, FailedFrees int
}

// Err says why the outcome is a problem, nil when every request was
// placed and every free freed: a script asking "does it fit?" reads the
// exit status, and the help promises success only when every step, frees
// included, did what it says. Requests not placed are said first.
func (o *Outcome) Err() error {
	switch {
	case o.Unplaced > 0:
		return fmt.Errorf("%d of %d request(s) could not be placed", o.Unplaced, o.Requests)
	case o.FailedFrees > 0:
		return fmt.Errorf("%d free(s) failed (see the steps above)", o.FailedFrees)
	}
	return nil
}

// Place runs n's requests, in order, on set (trace: keep the state after
// every step). On a live node a request for cpu or mem is judged against
// its state, as judgeHost says. Requests of zeros only are warned about.
func (n *Node) Place(set *Setup, trace bool) (*Outcome, error) {
	sim := set.Sim
	// cpu and mem join the maps only when a request asks for them; every
	// node has both, so a typo of either is told apart from them.
	known := append([]model.SlotName{model.SlotCPU, model.SlotMem}, sim.Slots...)
	steps, nothing, err := placement.ParseSteps(n.Requests, sim.Types, known)
	for _, r := range nothing {
		n.Warn(fmt.Sprintf("--request %q asks for nothing: Backend.AI drops amounts of 0, so this step allocates nothing", r))
	}
	if err != nil {
		return nil, usage("--request %v", err)
	}
	if err := placement.ValidateSteps(steps); err != nil {
		return nil, usage("--request: %v", err)
	}
	if set.Snap != nil {
		notes, err := judgeHost(placement.HostDoubts(set.Snap, set.Config, steps, presentCPUs(), n.Host.CPUs > 0, n.Host.MemGiven))
		if err != nil {
			return nil, err
		}
		for _, l := range notes {
			n.Warn(l)
		}
	}
	res, err := placement.Run(sim.Node, steps, placement.RunOptions{Trace: trace, Live: sim.Live, Manager: sim.Manager})
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	if r := placement.BadAmount(res); r != nil {
		return nil, usage("--request %q: %s", r.Step.Text, placement.ErrMessage(r.Err))
	}
	return &Outcome{Result: res, Unplaced: sim.Unplaced(res), Requests: placement.CountRequests(res.Steps), FailedFrees: placement.FailedFrees(res)}, nil
}

// judgeHost refuses a request for cpu or mem on a tree that cannot be
// this machine's (its kernels or its config's partition name cores the
// machine does not have), whose cores and memory stand for the node's
// unless --cpus/--mem give them; otherwise its notes say, one a slot,
// whose capacity the answer uses and what makes it doubtful.
func judgeHost(ds []placement.HostDoubt) (notes []string, err error) {
	flag := func(d placement.HostDoubt) string {
		if d.Slot == model.SlotMem {
			return "--mem SIZE"
		}
		return "--cpus N (and --cpu-numa K)"
	}
	for _, d := range ds {
		if d.Contradiction != "" {
			return nil, usage("simulate: a request asks for %s, and the tree of --config/--scratch-root is another node's: %s; give that node's %s with %s",
				d.Slot, d.Contradiction, d.Slot, flag(d))
		}
	}
	for _, d := range ds {
		line := fmt.Sprintf("%s: this machine's %s stand for the node's (another node's: %s)", d.Slot, d.Here, flag(d))
		if d.Evidence != "" {
			line += "; " + d.Evidence
		}
		notes = append(notes, line)
	}
	return notes, nil
}

// presentCPUs is every CPU this machine has, nil when /sys does not say
// (the host check then proves nothing from core ids).
func presentCPUs() []int {
	cpus, err := inventory.PresentCPUs("")
	if err != nil {
		return nil
	}
	return cpus
}
