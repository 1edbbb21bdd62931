package fleet

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"
)

// commonSlots are the slots most nodes register, for judging a request's
// names before any node has answered.
var commonSlots = []model.SlotName{model.SlotCPU, model.SlotMem, model.SlotCUDAShares, model.SlotCUDADevice}

// ParseRequest reads a placement request ("cuda.shares=2.5,cpu=8,mem=64g"
// or a JSON object), as `fgtop simulate --request` does; a free step, an
// empty request and amounts Backend.AI would mishandle are refused. The
// errors do not repeat the request: the caller names it (--fit "...": ).
func ParseRequest(text string) (alloc.Request, error) {
	st, err := placement.ParseStep(text, nil)
	if err != nil {
		// The nodes' slots are not known yet; a name one typo away from a
		// common slot ("mme=4g") is the mistake, not its amount.
		var u *model.UnknownSlotError
		if nerr := placement.UnknownSlotIn(text, commonSlots); errors.As(nerr, &u) && u.Suggest != "" {
			return nil, fmt.Errorf("unknown slot %q: did you mean %s?", string(u.Slot), u.Suggest)
		}
		// placement's words lead with the request, quoted, as simulate's
		// list of steps needs; here the caller names it.
		// Nor does the fleet take free=N (refused below), which
		// simulate's syntax error offers.
		msg := strings.TrimPrefix(err.Error(), strconv.Quote(text)+": ")
		return nil, errors.New(strings.TrimSuffix(msg, " or free=N"))
	}
	if st.IsFree() {
		return nil, errors.New("free=N releases a simulated step: the fleet places on live state only")
	}
	if len(st.Request) == 0 {
		return nil, errors.New("an empty request (want e.g. cuda.shares=2.5,cpu=8,mem=64g)")
	}
	if err := st.CheckAmounts(nil); err != nil {
		return nil, err //nolint:wrapcheck // placement's own words
	}
	if st.AsksForNothing() {
		return nil, errors.New("the request asks for nothing: Backend.AI drops amounts of 0")
	}
	return st.Request, nil
}

// JSONFleet is `fgtop fleet --once --json`: every node, reachable or not.
type JSONFleet struct {
	Time  string     `json:"time"`
	Nodes []JSONNode `json:"nodes"`
}

// JSONNode is one node. Amounts are decimal strings (exact).
type JSONNode struct {
	Node    string `json:"node"`
	Address string `json:"address"`
	Source  string `json:"source"`
	State   State  `json:"state"`
	Error   string `json:"error,omitempty"`
	// Note marks a node that misbehaves (Node.Note).
	Note     string `json:"note,omitempty"`
	LastSeen string `json:"last_seen,omitempty"`
	Slot     string `json:"slot,omitempty"`
	// GPUs, Pieces, Kernels and Issues are null for a node that gave
	// no figures (unreachable, connecting): not zeros it never said.
	GPUs     *int       `json:"gpus"`
	Held     *model.Dec `json:"held,omitempty"`
	Capacity *model.Dec `json:"capacity,omitempty"`
	Free     *model.Dec `json:"free,omitempty"`
	Largest  *model.Dec `json:"largest_fit,omitempty"`
	// LargestOvercommits: placing largest_fit would put a device over its
	// capacity across every agent (the agent's allocator places it all
	// the same); LargestClear is then the largest that overcommits none.
	LargestOvercommits bool         `json:"largest_fit_overcommits,omitempty"`
	LargestClear       *model.Dec   `json:"largest_fit_clear,omitempty"`
	Pieces             *int         `json:"free_pieces"`
	Kernels            *int         `json:"kernels"`
	Issues             *int         `json:"issues"`
	Devices            []JSONDevice `json:"devices"`
	// Fit is the outcome of --fit on this node.
	Fit *JSONFit `json:"fit,omitempty"`
}

// JSONDevice is one accelerator of a node.
type JSONDevice struct {
	Device string `json:"device"`
	// Name is how the node's console and `fgtop simulate` name the device
	// (GPU0, MIG 4/0); absent where they name it by its id.
	Name   string    `json:"name,omitempty"`
	Plugin string    `json:"plugin"`
	Parent string    `json:"parent,omitempty"`
	Slot   string    `json:"slot"`
	Held   model.Dec `json:"held"`
	// Capacity and Free are absent when the node could not know the
	// capacity (its fractional settings never read).
	Capacity *model.Dec `json:"capacity,omitempty"`
	Free     *model.Dec `json:"free,omitempty"`
}

// JSONFit is where a request lands on a node, or why it does not.
type JSONFit struct {
	Fits bool `json:"fits"`
	// Unknown: the node is not live (stale, unreachable, connecting), so
	// whether it takes the request now is not known; Reason says what its
	// last figures, if any, would say. Such a node is never in "fits".
	Unknown   bool                         `json:"unknown,omitempty"`
	Agent     string                       `json:"agent,omitempty"`
	Placement map[string]map[string]string `json:"placement,omitempty"`
	Error     string                       `json:"error,omitempty"`
	Reason    string                       `json:"reason,omitempty"`
	Short     map[string]string            `json:"short,omitempty"`
	// ShortAgent is the agent Short is of: the one that came closest.
	ShortAgent string `json:"short_agent,omitempty"`
	// Overcommit: the placement would put a device over its capacity
	// across every agent (Devices says which, with device_total_after).
	Overcommit bool                    `json:"overcommit"`
	Devices    []placement.DeviceAfter `json:"devices_after,omitempty"`
}

// JSONFitReport is `fgtop fleet --fit SLOTS --json`.
type JSONFitReport struct {
	Request string `json:"request"`
	// At is the past moment the fleet was asked at (--at), RFC 3339;
	// absent for now.
	At string `json:"at,omitempty"`
	// Fits lists the live nodes that take the request, in fleet order.
	Fits []string `json:"fits"`
	// Overcommits lists those of Fits where the placement would put a
	// device over its capacity across every agent.
	Overcommits []string   `json:"overcommits"`
	Nodes       []JSONNode `json:"nodes"`
}

// ToJSON spells a fleet out for scripts.
func ToJSON(f *Fleet) JSONFleet {
	out := JSONFleet{Time: f.Time.UTC().Format(time.RFC3339Nano), Nodes: []JSONNode{}}
	for i := range f.Nodes {
		out.Nodes = append(out.Nodes, nodeJSON(&f.Nodes[i]))
	}
	return out
}

func nodeJSON(n *Node) JSONNode {
	j := JSONNode{Node: n.Name, Address: n.Address(), Source: n.Source, State: n.State, Error: n.Reason, Note: n.Note, Devices: []JSONDevice{}}
	if !n.LastSeen.IsZero() {
		j.LastSeen = n.LastSeen.UTC().Format(time.RFC3339Nano)
	}
	if n.Snap == nil {
		return j
	}
	s := n.Sum
	j.Slot, j.GPUs, j.Pieces, j.Kernels, j.Issues = string(s.Slot), &s.GPUs, &s.Pieces, &s.Kernels, &s.Issues
	if s.Slot != "" {
		j.Held, j.Capacity, j.Free, j.Largest = ptr(s.Held), ptr(s.Capacity), ptr(s.Free), ptr(s.Largest)
		if s.Unknown > 0 {
			// A total that leaves some devices out is not the node's,
			// nor is what is free of it or the largest fit in it.
			j.Capacity, j.Free, j.Largest = nil, nil, nil
		}
		if s.QuantumUnknown || n.State != Live {
			// Nor is a node's that is not live: what fits on it now is
			// not known, as --fit says of it.
			j.Largest = nil
		}
		if j.Largest != nil && s.LargestOvercommits {
			j.LargestOvercommits, j.LargestClear = true, ptr(s.LargestClear)
		}
	}
	labels := names.Labels(n.Snap.Devices)
	for _, d := range s.Devices {
		jd := JSONDevice{Device: string(d.Device), Name: labels[model.DeviceKey{Name: d.Plugin, ID: d.Device}], Plugin: string(d.Plugin), Parent: string(d.Parent), Slot: string(d.Slot), Held: d.Held}
		if !d.CapacityUnknown {
			jd.Capacity, jd.Free = ptr(d.Capacity), ptr(d.Free)
		}
		j.Devices = append(j.Devices, jd)
	}
	return j
}

func ptr(d model.Dec) *model.Dec { return &d }

// FitJSON runs req on every node of f.
func FitJSON(f *Fleet, req alloc.Request, base Settings) JSONFitReport {
	out := JSONFitReport{Request: placement.FormatRequest(req), Fits: []string{}, Overcommits: []string{}, Nodes: []JSONNode{}}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		j := nodeJSON(n)
		switch {
		case n.Snap != nil && n.Sum.TooLarge:
			// The allocator's search over that many devices is what a
			// hostile node would make the fleet spend its time on.
			j.Fit = &JSONFit{Unknown: true, Reason: "unknown: " + (&TooLargeError{Devices: len(n.Snap.Devices)}).Error()}
		case n.State != Live:
			// Its figures, if any, are not the node's now: never a fit.
			why := fmt.Sprintf("unknown: the node is %s (%s)", n.State, n.Reason)
			if n.Snap == nil {
				why += "; no snapshot from it"
			} else if fit := FitRequest(n.Snap, req, base); fit.OK {
				why += "; its last figures would take it" + onAgent(fit.Agent)
			} else {
				why += "; on its last figures: " + fit.Reason
			}
			j.Fit = &JSONFit{Unknown: true, Reason: why}
		default:
			fit := FitRequest(n.Snap, req, base)
			if fit.Unknown {
				j.Fit = &JSONFit{Unknown: true, Reason: "unknown: " + fit.Reason}
				break
			}
			if !fit.OK && n.Sum.Unknown > 0 && asks(req, n.Sum.Slot) {
				// Refused against devices counted as holding nothing
				// more: the answer is the node's settings', not read.
				j.Fit = &JSONFit{Unknown: true, Reason: fmt.Sprintf("unknown: the capacity of %d %s device(s) is not known (the node could not read its plugin settings); against the rest: %s", n.Sum.Unknown, n.Sum.Slot, fit.Reason)}
				break
			}
			j.Fit = fitJSON(fit)
			if fit.OK {
				out.Fits = append(out.Fits, n.Name)
				if fit.Overcommit {
					out.Overcommits = append(out.Overcommits, n.Name)
				}
			}
		}
		out.Nodes = append(out.Nodes, j)
	}
	return out
}

// asks: req asks for some of slot.
func asks(req alloc.Request, slot model.SlotName) bool {
	for _, a := range req {
		if a.Slot == slot && a.Amount.Sign() > 0 {
			return true
		}
	}
	return false
}

func onAgent(a model.AgentID) string {
	if a == "" {
		return ""
	}
	return " on agent " + string(a)
}

func fitJSON(f Fit) *JSONFit {
	j := &JSONFit{Fits: f.OK, Agent: string(f.Agent), Error: f.ErrKind, Reason: f.Reason, Overcommit: f.Overcommit, Devices: f.Devices}
	if f.OK {
		j.Placement = map[string]map[string]string{}
		for _, s := range f.Placement {
			m := map[string]string{}
			for _, sh := range s.Shares {
				m[string(sh.Device)] = sh.Amount.String()
			}
			j.Placement[string(s.Slot)] = m
		}
	}
	if len(f.Short) > 0 {
		j.ShortAgent = string(f.Closest)
		j.Short = map[string]string{}
		for _, s := range f.Short {
			j.Short[string(s.Slot)] = s.Amount.String()
		}
	}
	return j
}

// CheckSlots refuses a request naming a slot no node of the fleet
// registers (a typo: "did you mean cuda.shares?"), judged on the nodes
// whose snapshot is known; with none known it cannot judge and passes.
func (f *Fleet) CheckSlots(req alloc.Request) error {
	var known []model.SlotName
	seen := false
	for _, n := range f.Nodes {
		if n.Snap == nil {
			continue
		}
		seen = true
		known = append(known, placement.DeviceSlots(n.Snap.Devices)...)
	}
	if !seen {
		return nil
	}
	return placement.CheckSlots(req, known)
}
