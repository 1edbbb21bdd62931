package replay

import (
	"fmt"
	"io"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
)

// Node is a node as a replay of its sessions sees it: its config, a
// snapshot of it, and today's partition (the config's in force on the
// snapshot's devices), which a suggestion starts from and stays nearest,
// and which an arrivals file's sessions run under.
type Node struct {
	Config *agentconfig.Config
	Snap   *model.Snapshot
	Today  []model.Agent
}

// OnNode is the node of cfg and snap.
func OnNode(cfg *agentconfig.Config, snap *model.Snapshot) *Node {
	return &Node{Config: cfg, Snap: snap, Today: Today(partition.Effective(cfg, partition.InventoryOf(snap)))}
}

// Slotted refuses a node whose partition gives an agent no amounts: a
// suggestion sizes slot-based amounts only, which a manual partition in
// Backend.AI main's form has.
func (n *Node) Slotted() error {
	if Unslotted(n.Today) == "" {
		return nil
	}
	c := n.Config
	return fmt.Errorf("%s gives its agents no amounts (%s, %s): it suggests slot-based amounts, which a manual partition of two or more agents in Backend.AI main's form has; switch with --mode manual first", c.Path, c.Format, c.Mode)
}

// Foreign says, after "the record ...", that rec is another node's (none
// of its agents is one the config names: Record.Foreign); "" when it is
// this node's or that cannot be told.
func (n *Node) Foreign(rec *Record) string { return rec.Foreign(n.Config.NamedAgentIDs()) }

// Suggest finds the amounts under which rec's sessions start on the node
// (Suggest, within its devices less what the config reserves, in the
// steps of its allocator): the suggestion, and the --slot flags that plan
// it. The error is ErrQuantumUnknown's.
func (n *Node) Suggest(rec *Record) ([]string, *Suggestion, error) {
	quantum, err := SuggestQuantum(n.Snap.Allocator, rec)
	if err != nil {
		return nil, nil, err
	}
	in := SuggestInput{Today: n.Today, Total: agentconfig.Totals(n.Snap.Devices)}
	in.Limits(n.Config, quantum)
	sg := Suggest(rec, in)
	return sg.Flags(n.Today), sg, nil
}

// Arrivals is the record of sessions (ParseArrivals') arriving on the
// node under today's partition, with the node's allocator settings. The
// error lists the sessions that ask for slots the node does not know or
// name agents it does not have (CheckArrivals).
func (n *Node) Arrivals(sessions []Session) (*Record, error) {
	ids := make([]model.AgentID, len(n.Today))
	for i, a := range n.Today {
		ids[i] = a.ID
	}
	if err := CheckArrivals(sessions, partition.KnownSlots(n.Config, partition.InventoryOf(n.Snap)), ids); err != nil {
		return nil, err
	}
	return ArrivalsRecord(sessions, n.Snap, fleet.SettingsFor(n.Snap, fleet.Settings{}), n.Today), nil
}

// WordFor is how many refusals a run words (Options.Word): text lists
// the first Printed of each list, JSON every one.
func WordFor(asJSON bool) int {
	if asJSON {
		return 0
	}
	return Printed
}

// ProposalOf is rec's agents (as at the end of the span) with the
// partition plan would write (Proposal); nil without a plan.
func ProposalOf(rec *Record, plan *partition.Plan) []model.Agent {
	if plan == nil {
		return nil
	}
	return Proposal(rec.AgentIDs(), plan.Next)
}

// Judge replays rec under the partitions in force (asWas: that run,
// started already, as the record was read or beside a suggestion's
// search; nil: a fidelity run started here) and under plan's proposal
// (nil: none), each wording word refusals of a list.
func Judge(rec *Record, asWas *Pending, plan *partition.Plan, word int) *Doc {
	if asWas == nil {
		asWas = Start(rec, rec.AsItWas(), Options{Fidelity: true, Word: word})
	}
	return CompareStarted(rec, asWas, ProposalOf(rec, plan), word)
}

// WriteJudged writes a replay as plan --replay and --arrivals say it:
// what the suggestion found (sg, nil: none, and its flags), the plan
// judged (nil: none) and the replay's report.
func WriteJudged(w io.Writer, sg *Suggestion, flags []string, plan *partition.Plan, doc *Doc) error {
	if sg != nil {
		sg.WriteText(w, flags)
	}
	if plan != nil {
		plan.WriteText(w)
		fmt.Fprintln(w)
	}
	return doc.WriteText(w)
}
