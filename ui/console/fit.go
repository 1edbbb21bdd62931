package console

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// fitLine is one line of a :fit answer.
type fitLine struct {
	Lvl  kit.Level
	Text string
}

// fitAnswer is where a request would land on the node a snapshot shows:
// a short text for the footer and, per agent, what its own allocator
// would do with it, in `fgtop simulate`'s words.
type fitAnswer struct {
	Short string
	// Brief is Short for a footer too narrow for it (the agent's short
	// name, the first slot's placement, the reason's head): at 80
	// columns Short was cut "GPU0=…".
	Brief string
	Lvl   kit.Level
	Lines []fitLine
}

// fitMsg is a :fit answer, computed in a Cmd; seq tells a stale one (an
// earlier :fit) from the last.
type fitMsg struct {
	seq int
	req string
	ans fitAnswer
	err error
}

// answerFit runs a request ("cuda.shares=0.5,cpu=2,mem=4g") through each
// agent's own allocator on s, as `fgtop simulate` and `fgtop fleet --fit`
// do on a live node (placement.Planner; the node's allocator settings as
// its snapshot says them). A request the node cannot take at all (a slot
// it does not register, a bad amount) is an error naming its slots.
func answerFit(s *model.Snapshot, text string) (fitAnswer, error) {
	if req, err := fleet.ParseRequest(text); err == nil {
		// Before the node's slots: a mode only guessed lacks cuda.shares.
		if err := fleet.ModeKnown(s, req); err != nil {
			return fitAnswer{}, err //nolint:wrapcheck // says what is unknown and why
		}
	}
	known := append([]model.SlotName{model.SlotCPU, model.SlotMem}, placement.DeviceSlots(s.Devices)...)
	if err := placement.UnknownSlotIn(text, known); err != nil {
		return fitAnswer{}, err //nolint:wrapcheck // names the slot and the node's slots
	}
	req, err := fleet.ParseRequest(text)
	if err == nil {
		err = placement.CheckSlots(req, known)
	}
	if err != nil {
		if !strings.Contains(err.Error(), "the node's slots") {
			err = fmt.Errorf("%w (the node's slots: %s)", err, slotList(known))
		}
		return fitAnswer{}, err
	}
	if err := fleet.QuantumKnown(s, req, fleet.Settings{}); err != nil {
		return fitAnswer{}, err //nolint:wrapcheck // says what is unknown and why
	}
	types := model.DefaultSlotTypes()
	name := placement.DeviceNames(s.Devices)
	pv := placement.NewPlanner(s, fleet.SettingsFor(s, fleet.Settings{})).Preview(req)

	var ans fitAnswer
	short := render.AgentShortNames(s.Agents)
	brief := func(id model.AgentID) string {
		if id == "" {
			return "the node"
		}
		return short[id]
	}
	node := s.Node
	if node == "" {
		node = "this node"
	}
	var agents []fitLine
	var takes, clean []int
	for i := range pv.Agents {
		ag := &pv.Agents[i]
		lvl := kit.LvlOK
		switch {
		case !ag.OK():
			lvl = kit.LvlWarn
		case ag.Overcommit:
			lvl = kit.LvlCrit
		}
		agents = append(agents, fitLine{lvl, agentName(ag.Agent) + " " + placement.AgentVerdict(ag, types, name)})
		if !ag.OK() {
			continue
		}
		takes = append(takes, i)
		if !ag.Overcommit {
			clean = append(clean, i)
		}
		for _, d := range ag.Devices {
			if d.Overcommit {
				agents = append(agents, fitLine{kit.LvlCrit, "  OVERCOMMIT: " + placement.OvercommitNote(d, types, name)})
			}
		}
	}
	var verdict fitLine
	switch {
	case len(clean) > 0:
		ag := &pv.Agents[clean[0]]
		ans.Lvl = kit.LvlOK
		where := placement.AllocationText(ag.Alloc, types, name)
		ans.Short = fmt.Sprintf("fit: %s takes it: %s", shortAgent(ag.Agent), where)
		ans.Brief = fmt.Sprintf("fit: %s takes it: %s", brief(ag.Agent), firstPart(where))
		verdict = fitLine{kit.LvlOK, fmt.Sprintf("it fits: %d of %d agent(s) would take it", len(takes), len(pv.Agents))}
	case pv.OnlyByOvercommit():
		ag := &pv.Agents[takes[0]]
		ans.Lvl = kit.LvlCrit
		where := placement.AllocationText(ag.Alloc, types, name)
		ans.Short = fmt.Sprintf("fit: only by OVERCOMMIT: %s takes it: %s", shortAgent(ag.Agent), where)
		ans.Brief = fmt.Sprintf("fit: only by OVERCOMMIT: %s takes it: %s", brief(ag.Agent), firstPart(where))
		verdict = fitLine{kit.LvlCrit, "only by OVERCOMMIT: every agent that would take it puts a device over its capacity"}
	default:
		ans.Lvl = kit.LvlWarn
		why, whyBrief := "no agent", "no agent"
		if len(pv.Agents) > 0 {
			why = pv.Agents[0].Reason
			// "insufficient cuda.shares: 0.20 free, 3 requested": the
			// head says what is short, the detail the amounts.
			whyBrief, _, _ = strings.Cut(why, ": ")
			if len(pv.Agents) > 1 {
				why = shortAgent(pv.Agents[0].Agent) + ": " + why
				whyBrief = brief(pv.Agents[0].Agent) + ": " + whyBrief
			}
		}
		ans.Short = fmt.Sprintf("fit: refused: %s", why)
		ans.Brief = fmt.Sprintf("fit: refused: %s", whyBrief)
		verdict = fitLine{kit.LvlWarn, "refused: no agent would take it"}
	}
	ans.Lines = append([]fitLine{verdict, {kit.LvlDim, fmt.Sprintf("%s as of %s, each agent placing with its own allocator on its own partition and kernels, as fgtop simulate does:",
		node, s.Time.Format("Jan 2 15:04:05"))}}, agents...)
	return ans, nil
}

// agentName is how simulate names an agent's allocator; a node without
// agents has the one allocator over every device and kernel.
func agentName(id model.AgentID) string {
	if id == "" {
		return "the node's allocator (every kernel)"
	}
	return fmt.Sprintf("agent %s's own allocator (its kernels only)", id)
}

// shortAgent names an agent in the footer.
func shortAgent(id model.AgentID) string {
	if id == "" {
		return "the node"
	}
	return "agent " + string(id)
}

func slotList(known []model.SlotName) string {
	ks := slices.Clone(known)
	slices.Sort(ks)
	ks = slices.Compact(ks)
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return strings.Join(out, ", ")
}

// fitCommand runs :fit on the shown snapshot (live or :at's) in a Cmd:
// the planner loads every kernel's allocation, work kept off Update. It
// writes nothing, so a read-only viewer has it too.
func (a *App) fitCommand(f []string) tea.Cmd {
	if len(f) < 2 {
		a.Flashf(kit.LvlWarn, "usage: :fit SLOTS, e.g. :fit cuda.shares=0.5,cpu=2,mem=4g")
		return nil
	}
	if a.Snap == nil {
		a.Flashf(kit.LvlWarn, ":fit: no snapshot yet")
		return nil
	}
	a.fitSeq++
	seq, s, text := a.fitSeq, a.Snap, strings.Join(f[1:], "")
	return func() tea.Msg {
		ans, err := answerFit(s, text)
		return fitMsg{seq: seq, req: text, ans: ans, err: err}
	}
}

// fitAnswered shows a :fit answer: short in the footer, whole in a
// detail screen (esc back).
func (a *App) fitAnswered(msg fitMsg) {
	if msg.seq != a.fitSeq {
		return
	}
	if msg.err != nil {
		a.Flashf(kit.LvlCrit, ":fit "+msg.err.Error())
		return
	}
	lines := make([]detailLine, len(msg.ans.Lines))
	for i, l := range msg.ans.Lines {
		lines[i] = text(l.Lvl, l.Text)
	}
	for _, l := range a.layers {
		if ds, ok := l.(*detail); ok && ds.Kind == detFit {
			ds.Close()
		}
	}
	a.prune()
	a.push(&detail{common: a.common, Kind: detFit, Title: "fit " + msg.req, Lines: lines})
	a.Flashf(msg.ans.Lvl, msg.ans.Short)
	a.Flash.Short = msg.ans.Brief
}

// firstPart is an allocation text's first slot ("cuda.shares GPU3=0.50"
// of "cuda.shares GPU3=0.50; cpu 29=1 30=1; mem root=4g"): the devices
// the request lands on, the detail screen saying the rest.
func firstPart(alloc string) string {
	first, _, _ := strings.Cut(alloc, "; ")
	return first
}
