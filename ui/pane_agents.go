package ui

import (
	"strconv"

	"github.com/fgtop/fgtop/model"
)

// agentsPane draws each agent's partition against what it holds: a block
// of lines per agent, the cursor on the agent.
type agentsPane struct {
	list
}

func newAgentsPane(c *common) *agentsPane {
	p := &agentsPane{}
	p.list = list{common: c, id: paneAgents, size: func(d *derived) int { return len(d.agents) },
		lines: func(i int) int { return agentLines(&p.d.agents[i]) }}
	return p
}

// Title names the pane and counts the agents.
func (p *agentsPane) Title() []span {
	return paneTitle(p.id, p.focused, strconv.Itoa(p.Len()))
}

func (p *agentsPane) tab() span { return tabSpan(p.id, lvlDim, p.Len()) }

// Selected is the selected agent's id.
func (p *agentsPane) Selected() string {
	if p.d != nil && p.cursor < len(p.d.agents) {
		return string(p.d.agents[p.cursor].a.ID)
	}
	return ""
}

func (p *agentsPane) detailFor() (*detail, string) {
	if id := p.Selected(); id != "" {
		return &detail{kind: detAgent, agent: model.AgentID(id)}, ""
	}
	return nil, ""
}

// View draws the title and the agents' blocks.
func (p *agentsPane) View() []string { return p.viewTitled(p.Title()) }

func (p *agentsPane) viewTitled(title []span) []string {
	return p.frame(title, nil, p.d != nil, "", nil,
		func() string { return "no agent config: every device is shared" },
		func(i int, out []string) []string {
			return agentBlockOf(p.st, &p.d.agents[i], p.w, i == p.cursor, p.focused, out)
		})
}

// agentsWant is the rows the agents pane would like: every agent's block
// (one row before the first snapshot).
func agentsWant(a *App) int {
	if a.d == nil {
		return 1
	}
	n := 0
	for i := range a.d.agents {
		n += agentLines(&a.d.agents[i])
	}
	return n
}
