package placement

import (
	"errors"
	"fmt"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// Error kinds of a free step that cannot be carried out. They are fgtop's
// own (Backend.AI never frees a kernel it did not create).
const (
	// KindNotAllocated: the request to free failed, so nothing was
	// allocated.
	KindNotAllocated = "NotAllocated"
	// KindAlreadyFreed: the allocation was freed by an earlier step.
	KindAlreadyFreed = "AlreadyFreed"
)

// Step is one step of a simulation: an allocation request, or the release
// of the allocation an earlier request made.
type Step struct {
	// Text is the step as the user wrote it ("cuda.shares=0.2", "free=1").
	Text string
	// Request is what an allocation step asks for (possibly empty).
	Request alloc.Request
	// Free, when > 0, makes this a free step: it releases the allocation of
	// the Free-th allocation step (1-based, counting allocation steps only,
	// so free=N releases kernel kN).
	Free int
}

// IsFree reports whether the step is a free step.
func (s Step) IsFree() bool { return s.Free > 0 }

// StepResult is what one step did.
type StepResult struct {
	Step Step
	// Index is the 1-based position of the step.
	Index int
	// Kernel names the kernel the step created or freed: "k<N>" for the
	// N-th allocation step (a failed allocation still uses its name).
	Kernel string
	// Alloc is what an allocation step got.
	Alloc alloc.KernelAllocation
	// Released is what a free step gave back.
	Released alloc.KernelAllocation
	// ErrKind is set when the step failed: the Python exception class name
	// for an allocation (InsufficientResource, ...), KindNotAllocated or
	// KindAlreadyFreed for a free.
	ErrKind string
	// Err is the failure.
	Err error
	// StateAfter is the node's State after the step (only with
	// RunOptions.Trace).
	StateAfter alloc.Allocation
}

// OK reports whether the step succeeded.
func (r *StepResult) OK() bool { return r.Err == nil }

// RunOptions tune Run.
type RunOptions struct {
	// Trace records the node's State after every step.
	Trace bool
	// Live are allocations already on the node (loaded with Node.Load);
	// they count in the result's AllocMap.
	Live []alloc.KernelAllocation
	// Manager, when set, refuses (KindManagerRefused) a request beyond
	// what the manager would send the agent: its given amount less what
	// its kernels hold, the steps before included.
	Manager *ManagerLimit
}

// Result is the outcome of a simulation.
type Result struct {
	Steps []StepResult
	// State is the node's cumulative allocation after the last step.
	State alloc.Allocation
	// AllocMap is Node.AllocMap over the allocations still live at the
	// end (those of RunOptions.Live and every allocation not freed).
	AllocMap []alloc.Share
}

// ValidateSteps checks what can be checked before running: every free step
// names an allocation step that comes before it.
func ValidateSteps(steps []Step) error {
	allocs := 0
	for i, s := range steps {
		if !s.IsFree() {
			allocs++
			continue
		}
		if s.Free > allocs {
			return fmt.Errorf("step %d (%s): there is no allocation request #%d before it (%d so far)", i+1, s.Text, s.Free, allocs)
		}
	}
	return nil
}

// Run executes steps in order on node (which it changes). A failing step is
// recorded and the next one runs. The steps must pass ValidateSteps.
func Run(node *Node, steps []Step, opts RunOptions) (*Result, error) {
	if err := ValidateSteps(steps); err != nil {
		return nil, err
	}
	res := &Result{Steps: make([]StepResult, 0, len(steps))}
	type kernel struct {
		alloc alloc.KernelAllocation
		ok    bool
		freed bool
	}
	var kernels []kernel
	// taken is what the run's live allocations hold per slot: the
	// manager counts them as the agent's kernels.
	taken := slotSums{}
	for i, s := range steps {
		r := StepResult{Step: s, Index: i + 1}
		if s.IsFree() {
			k := &kernels[s.Free-1]
			r.Kernel = fmt.Sprintf("k%d", s.Free)
			switch {
			case !k.ok:
				r.ErrKind = KindNotAllocated
				r.Err = fmt.Errorf("request #%d (%s) failed, so there is nothing to free", s.Free, r.Kernel)
			case k.freed:
				r.ErrKind = KindAlreadyFreed
				r.Err = fmt.Errorf("the allocation of request #%d (%s) was already freed", s.Free, r.Kernel)
			default:
				if err := node.Free(k.alloc); err != nil {
					return nil, fmt.Errorf("step %d: freeing %s: %w", i+1, r.Kernel, err)
				}
				k.freed = true
				r.Released = k.alloc
				taken.add(FlattenAllocation(k.alloc), -1)
			}
		} else {
			kernels = append(kernels, kernel{})
			r.Kernel = fmt.Sprintf("k%d", len(kernels))
			if opts.Manager != nil {
				if why := opts.Manager.refusal(s.Request, taken); why != "" {
					r.ErrKind, r.Err = KindManagerRefused, errors.New(why)
					if opts.Trace {
						r.StateAfter = node.State()
					}
					res.Steps = append(res.Steps, r)
					continue
				}
			}
			got, err := node.Allocate(s.Request)
			if err != nil {
				r.Err = err
				r.ErrKind = errKind(err)
			} else {
				r.Alloc = got
				kernels[len(kernels)-1] = kernel{alloc: got, ok: true}
				taken.add(FlattenAllocation(got), 1)
			}
		}
		if opts.Trace {
			r.StateAfter = node.State()
		}
		res.Steps = append(res.Steps, r)
	}
	live := append([]alloc.KernelAllocation(nil), opts.Live...)
	for _, k := range kernels {
		if k.ok && !k.freed {
			live = append(live, k.alloc)
		}
	}
	res.State = node.State()
	res.AllocMap = node.AllocMap(live)
	return res, nil
}

// errKind returns the Python class name of an allocation error, or
// "Error" for anything that is not an *alloc.Error.
func errKind(err error) string {
	var ae *alloc.Error
	if errors.As(err, &ae) {
		return ae.Kind()
	}
	return "Error"
}

// ErrMessage returns the message of an allocation error without fgtop's
// wrapping ("alloc: allocating cuda: ..."): the text Backend.AI's str(e)
// gives where fgtop reproduces it.
func ErrMessage(err error) string {
	var ae *alloc.Error
	if errors.As(err, &ae) {
		return ae.Error()
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// FlattenAllocation merges a kernel's per-plugin allocations into one
// ordered {slot: {device: amount}} mapping (plugins in allocation order).
func FlattenAllocation(k alloc.KernelAllocation) alloc.Allocation {
	var out alloc.Allocation
	for _, d := range k {
		out = append(out, d.Alloc...)
	}
	return out
}

// Total returns the sum of an allocation's amounts for one slot.
func Total(a alloc.Allocation, slot model.SlotName) model.Dec {
	t := model.Zero
	for _, s := range a {
		if s.Slot != slot {
			continue
		}
		for _, sh := range s.Shares {
			t = t.Add(sh.Amount)
		}
	}
	return t
}
