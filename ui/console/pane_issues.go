package console

import (
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)
import "strconv"

// issuesPane lists the snapshot's issues, most severe first.
type issuesPane struct {
	list
}

func newIssuesPane(c *common) *issuesPane {
	p := &issuesPane{}
	p.list = list{common: c, ID: paneIssues, Size: func(d *render.Derived) int { return len(d.Issues) }}
	return p
}

// Title names the pane and counts the issues.
func (p *issuesPane) Title() []kit.Span {
	return paneTitle(p.ID, p.focused, strconv.Itoa(p.Len()))
}

// tab is coloured by the worst issue, so a hidden issues pane still warns.
func (p *issuesPane) tab() kit.Span {
	lvl := kit.LvlDim
	if n := p.Len(); n > 0 && p.d.Issues[0].Is.Severity > 0 {
		lvl = p.d.Issues[0].Sev.Lvl
	}
	return tabSpan(p.ID, lvl, p.Len())
}

// selectedIssue is the issue under the cursor, or nil.
func (p *issuesPane) selectedIssue() *render.IssueRow {
	if p.d != nil && p.Cursor < len(p.d.Issues) {
		return &p.d.Issues[p.Cursor]
	}
	return nil
}

func (p *issuesPane) detailFor() (*detail, string) {
	if r := p.selectedIssue(); r != nil {
		return &detail{Kind: detIssue, issue: r.ID}, ""
	}
	return nil, ""
}

// Selected is what the selected issue is about: its kernel, else its
// file, else its device, else its agent.
func (p *issuesPane) Selected() string {
	r := p.selectedIssue()
	if r == nil {
		return ""
	}
	is := r.Is
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

func (p *issuesPane) viewTitled(title []kit.Span) []string {
	return p.frame(title, nil, p.d != nil, "", nil,
		func() string { return "no issues" },
		func(i int, out []string) []string {
			return append(out, issueRowOf(p.St, &p.d.Issues[i], p.W, i == p.Cursor, p.focused))
		})
}

// issuesWant is the rows the issues pane would like.
func issuesWant(a *App) int {
	if a.d == nil {
		return 0
	}
	return len(a.d.Issues)
}
