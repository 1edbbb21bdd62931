package ui

import "strconv"

// issuesPane lists the snapshot's issues, most severe first.
type issuesPane struct {
	list
}

func newIssuesPane(c *common) *issuesPane {
	p := &issuesPane{}
	p.list = list{common: c, id: paneIssues, size: func(d *derived) int { return len(d.issues) }}
	return p
}

// Title names the pane and counts the issues.
func (p *issuesPane) Title() []span {
	return paneTitle(p.id, p.focused, strconv.Itoa(p.Len()))
}

// tab is coloured by the worst issue, so a hidden issues pane still warns.
func (p *issuesPane) tab() span {
	lvl := lvlDim
	if n := p.Len(); n > 0 && p.d.issues[0].is.Severity > 0 {
		lvl = p.d.issues[0].sev.lvl
	}
	return tabSpan(p.id, lvl, p.Len())
}

// selectedIssue is the issue under the cursor, or nil.
func (p *issuesPane) selectedIssue() *issueRow {
	if p.d != nil && p.cursor < len(p.d.issues) {
		return &p.d.issues[p.cursor]
	}
	return nil
}

func (p *issuesPane) detailFor() (*detail, string) {
	if r := p.selectedIssue(); r != nil {
		return &detail{kind: detIssue, issue: r.id}, ""
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
	return p.frame(title, nil, p.d != nil, "", nil,
		func() string { return "no issues" },
		func(i int, out []string) []string {
			return append(out, issueRowOf(p.st, &p.d.issues[i], p.w, i == p.cursor, p.focused))
		})
}

// issuesWant is the rows the issues pane would like.
func issuesWant(a *App) int {
	if a.d == nil {
		return 0
	}
	return len(a.d.issues)
}
