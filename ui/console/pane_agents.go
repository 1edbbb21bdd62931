package console

import (
	"strconv"
	"unsafe"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// agentsPane draws each agent's partition against what it holds: a block
// of lines per agent, the cursor on the agent.
type agentsPane struct {
	list
}

func newAgentsPane(c *common) *agentsPane {
	p := &agentsPane{}
	p.list = list{common: c, ID: paneAgents, Size: func(d *render.Derived) int { return len(d.Agents) },
		Lines: func(i int) int { return agentLines(&p.d.Agents[i]) }}
	return p
}

// Title names the pane and counts the agents.
func (p *agentsPane) Title() []kit.Span {
	return paneTitle(p.ID, p.focused, strconv.Itoa(p.Len()))
}

func (p *agentsPane) tab() kit.Span { return tabSpan(p.ID, kit.LvlDim, p.Len()) }

// Selected is the selected agent's id.
func (p *agentsPane) Selected() string {
	if p.d != nil && p.Cursor < len(p.d.Agents) {
		return string(p.d.Agents[p.Cursor].A.ID)
	}
	return ""
}

func (p *agentsPane) detailFor() (*detail, string) {
	if id := p.Selected(); id != "" {
		return &detail{Kind: detAgent, Agent: model.AgentID(id)}, ""
	}
	return nil, ""
}

// View draws the title and the agents' blocks.
func (p *agentsPane) View() []string { return p.viewTitled(p.Title()) }

func (p *agentsPane) viewTitled(title []kit.Span) []string {
	return p.frame(title, nil, p.d != nil, "", nil,
		func() string { return "no agent config: every device is shared" },
		func(i int, out []string) []string {
			r := &p.d.Agents[i]
			in := blockIn{st: p.St, w: p.W,
				ids:  [2]unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(r.Header)), unsafe.Pointer(unsafe.SliceData(r.Lines))},
				lens: [2]int{len(r.Header), len(r.Lines)}}
			if i == p.Cursor {
				in.flags |= 1
			}
			if p.focused {
				in.flags |= 2
			}
			return append(out, p.memo.block(blockKey{p.ID, i}, in, func() []string {
				return agentBlockOf(p.St, r, p.W, i == p.Cursor, p.focused, nil)
			})...)
		})
}

// agentsWant is the rows the agents pane would like: every agent's block
// (one row before the first snapshot).
func agentsWant(a *App) int {
	if a.d == nil {
		return 1
	}
	n := 0
	for i := range a.d.Agents {
		n += agentLines(&a.d.Agents[i])
	}
	return n
}
