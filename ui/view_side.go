package ui

import "strconv"

// agentLines is how many rows an agent's block takes.
func agentLines(r *agentRow) int { return 1 + len(r.lines) }

// viewAgents draws each agent's partition against what it holds.
func (a *App) viewAgents(r rect, title []span) []string {
	out := make([]string, 0, r.h)
	n := 0
	if a.d != nil {
		n = len(a.d.agents)
	}
	out = append(out, a.titleRow(r.w, title, nil, n, a.agentsFitting(r.h-1), a.offset[paneAgents]))
	if a.d == nil || r.h < 2 {
		return out[:min(len(out), r.h)]
	}
	if n == 0 {
		return append(out, a.emptyRow(r.w, "no agent config: every device is shared"))
	}
	st := a.st
	for i := a.offset[paneAgents]; i < n && len(out) < r.h; i++ {
		ag := &a.d.agents[i]
		sel := i == a.cursor[paneAgents]
		l := a.rowStart(sel && a.focus == paneAgents, sel)
		putSpans(l, st, ag.header, r.w-l.w)
		out = append(out, l.finish(r.w))
		for _, ln := range ag.lines {
			if len(out) >= r.h {
				break
			}
			l := newLine(paint{})
			l.gap(2)
			putSpans(l, st, ln, r.w-2)
			out = append(out, l.finish(r.w))
		}
	}
	return out
}

// agentsFitting is how many agents fit from the current offset in rows.
func (a *App) agentsFitting(rows int) int {
	if a.d == nil {
		return 0
	}
	n, used := 0, 0
	for i := a.offset[paneAgents]; i < len(a.d.agents); i++ {
		used += agentLines(&a.d.agents[i])
		if used > rows {
			break
		}
		n++
	}
	return max(n, 1)
}

// viewIssues lists the snapshot's issues, most severe first.
func (a *App) viewIssues(r rect, title []span) []string {
	out := make([]string, 0, r.h)
	n := 0
	if a.d != nil {
		n = len(a.d.issues)
	}
	out = append(out, a.titleRow(r.w, title, nil, n, r.h-1, a.offset[paneIssues]))
	if a.d == nil || r.h < 2 {
		return out[:min(len(out), r.h)]
	}
	if n == 0 {
		return append(out, a.emptyRow(r.w, "no issues"))
	}
	st := a.st
	for i := a.offset[paneIssues]; i < n && len(out) < r.h; i++ {
		is := &a.d.issues[i]
		sel := i == a.cursor[paneIssues]
		l := a.rowStart(sel && a.focus == paneIssues, sel)
		spans := []span{is.sev, {lvlPlain, " " + is.text}}
		if is.where != "" {
			spans = append(spans, span{lvlDim, "  " + is.where})
		}
		putSpans(l, st, spans, r.w-l.w)
		out = append(out, l.finish(r.w))
	}
	return out
}

// issuesTitle counts issues by severity in the title.
func (a *App) issuesTitle() []span {
	n := 0
	if a.d != nil {
		n = len(a.d.issues)
	}
	return a.paneTitle(paneIssues, strconv.Itoa(n))
}

func (a *App) agentsTitle() []span {
	n := 0
	if a.d != nil {
		n = len(a.d.agents)
	}
	return a.paneTitle(paneAgents, strconv.Itoa(n))
}
