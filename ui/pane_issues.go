package ui

import (
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// issuesPane lists the snapshot's issues, most severe first.
type issuesPane struct {
	*common
	list
}

func newIssuesPane(c *common) *issuesPane {
	p := &issuesPane{common: c}
	p.list = list{id: paneIssues, count: p.rows}
	return p
}

func (p *issuesPane) rows() int {
	if p.d == nil {
		return 0
	}
	return len(p.d.issues)
}

func (p *issuesPane) owns(action) bool { return false }

// Bindings: the issues pane has no keys of its own (enter, which goes to
// what an issue is about, is the root's detail key).
func (p *issuesPane) Bindings() []key.Binding { return nil }

// Update moves the cursor.
func (p *issuesPane) Update(msg tea.Msg) tea.Cmd {
	p.updateList(p.keys, msg, nil)
	return nil
}

// Title names the pane and counts the issues.
func (p *issuesPane) Title() []span {
	return paneTitle(paneIssues, p.focused, strconv.Itoa(p.rows()))
}

// tab is coloured by the worst issue, so a hidden issues pane still warns.
func (p *issuesPane) tab() span {
	lvl := lvlDim
	if n := p.rows(); n > 0 && p.d.issues[0].is.Severity > 0 {
		lvl = p.d.issues[0].sev.lvl
	}
	return tabSpan(paneIssues, lvl, p.rows())
}

// selectedIssue is the issue under the cursor, or nil.
func (p *issuesPane) selectedIssue() *issueRow {
	if p.d != nil && p.cursor < len(p.d.issues) {
		return &p.d.issues[p.cursor]
	}
	return nil
}

// Selected is what the selected issue is about: its kernel, else its
// file, else its device, else its agent.
func (p *issuesPane) Selected() string {
	r := p.selectedIssue()
	if r == nil {
		return ""
	}
	is := r.is
	switch {
	case is.Kernel != "":
		return string(is.Kernel)
	case is.File != "":
		return is.File
	case is.Device.ID != "":
		return string(is.Device.ID)
	case is.Agent != "":
		return string(is.Agent)
	}
	return ""
}

// View draws the title and the visible issues.
func (p *issuesPane) View() []string { return p.viewTitled(p.Title()) }

func (p *issuesPane) viewTitled(title []span) []string {
	return p.frame(p.st, title, nil, p.d != nil, "", nil,
		func() string { return "no issues" },
		func(i int, out []string) []string {
			return append(out, issueRowOf(p.st, &p.d.issues[i], p.w, i == p.cursor, p.focused))
		})
}
