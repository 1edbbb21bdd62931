package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// Today is the agents of p (a config's partition as in force) with the
// amounts it gives them, in p's order: the partition a suggestion starts
// from and a replay of arrivals runs under.
func Today(p *partition.Partition) []model.Agent {
	today := make([]model.Agent, 0, len(p.Agents))
	for _, a := range p.Agents {
		today = append(today, model.Agent{ID: a.ID})
	}
	p.Fill(today)
	return today
}

// Unslotted is the first of agents the partition gives no amounts ("":
// every one has them): the suggestion sizes slot-based amounts only.
func Unslotted(agents []model.Agent) model.AgentID {
	for _, a := range agents {
		if a.Given == nil {
			return a.ID
		}
	}
	return ""
}

// Proposal is the agents ids (a record's, in its order) and then next's
// others, with the partition next would write: what a proposal's run
// replays. Where next splits the node between agents whose ids it sets,
// an agent of ids it lacks is not one of them: its sessions are refused
// in the run, as the manager would not send them to an agent that is
// gone (run.go's route), not replayed on the whole node as if it had no
// limit. Otherwise (one agent, or one whose id Backend.AI makes up at
// every start, which no record knows it by) each recorded agent is
// replayed as before: by the allocator over the node's devices, with no
// manager limit.
func Proposal(ids []model.AgentID, next *partition.Partition) []model.Agent {
	agents := make([]model.Agent, 0, len(ids)+len(next.Agents))
	split := len(next.Agents) > 1
	for _, ap := range next.Agents {
		if agentconfig.UnsetID(ap.ID) {
			split = false
		}
	}
	for _, id := range ids {
		if split && next.Agent(id) == nil {
			continue
		}
		agents = append(agents, model.Agent{ID: id})
	}
	for _, ap := range next.Agents {
		if !slices.Contains(ids, ap.ID) {
			agents = append(agents, model.Agent{ID: ap.ID})
		}
	}
	next.Fill(agents)
	return agents
}

// SpanAgentIDs are the agents of every partition rec's span saw, the
// latest partition's first: a record whose agents were renamed within it
// knows the old names as well as the new ones.
func (rec *Record) SpanAgentIDs() []model.AgentID {
	ids := rec.AgentIDs()
	for i := len(rec.Epochs) - 1; i >= 0; i-- {
		for _, a := range rec.Epochs[i].Agents {
			if !slices.Contains(ids, a.ID) {
				ids = append(ids, a.ID)
			}
		}
	}
	return ids
}

// Foreign says, in words that follow "the record ...", that none of rec's
// agents (SpanAgentIDs) is one of ids, so the record is another node's: a
// proposal or a suggestion for ids would be judged on nothing. "" when
// one is, or either is empty.
func (rec *Record) Foreign(ids []model.AgentID) string {
	own := rec.SpanAgentIDs()
	if len(ids) == 0 || len(own) == 0 || slices.ContainsFunc(own, func(id model.AgentID) bool { return slices.Contains(ids, id) }) {
		return ""
	}
	join := func(ids []model.AgentID) string {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = string(id)
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("is of agents %s; the config's are %s: none in common, so it is another node's record (or the agents were renamed)", join(own), join(ids))
}

// AgentIDs are the agents of the partition in force at the end of rec's
// span, in its order.
func (rec *Record) AgentIDs() []model.AgentID {
	var ids []model.AgentID
	if n := len(rec.Epochs); n > 0 {
		for _, a := range rec.Epochs[n-1].Agents {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// Compare runs rec under the partitions in force (a fidelity run with
// fidelity: a recorded span; without, arrivals from a file) and, given
// one, under the proposal, each wording word refusals (Options.Word), and
// reports the two. The two runs share nothing but the record, which
// neither changes, so they run at once.
func Compare(rec *Record, proposal []model.Agent, fidelity bool, word int) *Doc {
	asWas := Start(rec, rec.AsItWas(), Options{Fidelity: fidelity, Word: word})
	var prop *Result
	if proposal != nil {
		prop = Run(rec, Fixed(proposal), Options{Word: word})
	}
	return newDoc(rec, asWas.Wait(), prop, !fidelity)
}

// CompareStarted is Compare with the run under the partitions in force
// started already (beside a suggestion's search).
func CompareStarted(rec *Record, asWas *Pending, proposal []model.Agent, word int) *Doc {
	var prop *Result
	if proposal != nil {
		prop = Run(rec, Fixed(proposal), Options{Word: word})
	}
	return NewDoc(rec, asWas.Wait(), prop)
}

// Pending is a run going on on its own goroutine.
type Pending struct {
	done chan struct{}
	res  *Result
	// redo says why a run fed as the record was read was made again on
	// the record once read ("": it was not; LoadStarted).
	redo string
}

// Start starts Run(rec, part, opts) on its own goroutine: runs share
// the record, which none changes.
func Start(rec *Record, part Partition, opts Options) *Pending {
	p := &Pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.res = Run(rec, part, opts)
	}()
	return p
}

// Wait is the run's result, once it is done.
func (p *Pending) Wait() *Result {
	<-p.done
	return p.res
}

// ErrQuantumUnknown is the suggestion's refusal on fractional maps whose
// quantum_size neither the node nor its record knows: amounts found in
// steps of a default quantum may be ones the node's allocator rounds away.
var ErrQuantumUnknown = errors.New("the quantum_size of the fractional maps is unknown (the node's CUDA plugin settings were not read, or theirs is not a positive decimal), so no cuda.shares amounts are suggested in its steps; fix the settings in etcd first")

// SuggestQuantum is the quantum a suggestion steps shares by: the node's
// (live), else the one its record knew (rec may be nil); ErrQuantumUnknown
// when the maps are fractional and neither says.
func SuggestQuantum(live model.Allocator, rec *Record) (model.Dec, error) {
	switch {
	case !live.QuantumUnknown():
		return live.Quantum, nil
	case rec != nil && rec.Settings.Quantum.Sign() > 0:
		return rec.Settings.Quantum, nil
	}
	return model.Dec{}, ErrQuantumUnknown
}

// Limits sets in's Reserved and Step for every slot of in.Total as the
// config and the allocator have them: what the config reserves; a whole
// core, 1 GiB of memory (or the config's memory-align-size when larger)
// and the allocator's quantum of a shares slot (the default where it is
// not positive).
func (in *SuggestInput) Limits(cfg *agentconfig.Config, quantum model.Dec) {
	if in.Reserved == nil {
		in.Reserved = model.ResourceSlot{}
	}
	if in.Step == nil {
		in.Step = model.ResourceSlot{}
	}
	if quantum.Sign() <= 0 {
		quantum = placement.DefaultQuantum
	}
	gib := model.NewDec(1<<30, 0)
	for s := range in.Total {
		in.Reserved[s] = cfg.Reserved(s)
		switch {
		case s == model.SlotCPU:
			in.Step[s] = model.NewDec(1, 0)
		case s == model.SlotMem:
			in.Step[s] = gib
			if cfg.MemoryAlignSize.Sign() > 0 && gib.Less(cfg.MemoryAlignSize) {
				in.Step[s] = cfg.MemoryAlignSize
			}
		case s.MajorType() == "shares":
			in.Step[s] = quantum
		}
	}
}
