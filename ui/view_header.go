package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// headerPiece is a part of the header line; when the line is too narrow
// the pieces with the highest drop value go first.
type headerPiece struct {
	spans []span
	drop  int // 0: never dropped
	right bool
}

// sourceBadge says where devices come from and how healthy that is.
func sourceBadge(s *model.Snapshot) span {
	if s == nil {
		return span{lvlDim, "waiting for the engine"}
	}
	src := s.Source
	name := src.Kind
	switch src.Kind {
	case "nvml":
		name = "NVML"
	case "mock":
		return span{lvlOK, "mock devices"}
	case "demo":
		// Said in the header, not only in a detail: every figure in the
		// device rows is made up.
		return span{lvlWarn, "demo (synthetic telemetry)"}
	case "none", "":
		return span{lvlCrit, "no devices"}
	}
	switch src.Health {
	case "ok", "":
		return span{lvlOK, name + " ok"}
	case "degraded":
		return span{lvlWarn, name + " degraded"}
	}
	return span{lvlCrit, name + " " + src.Health}
}

// pluginName is how the console names a CUDA plugin kind.
func pluginName(kind string) string {
	switch kind {
	case model.PluginCUDAOpen:
		return "cuda_open"
	case model.PluginCUDAFractional:
		return "fGPU"
	}
	return kind
}

// pluginBadge names the CUDA plugin the GPUs are registered as and the
// rule that chose it ("cuda_open (flag)"), with a warning while its
// settings cannot be read; nil when no plugin is mirrored.
func pluginBadge(s *model.Snapshot) []span {
	if s == nil || s.Plugin == nil {
		return nil
	}
	p := s.Plugin
	out := []span{{lvlPlain, pluginName(p.Kind)}, {lvlDim, " (" + p.Source + ")"}}
	if !p.SettingsOK && strings.HasPrefix(p.Settings, "etcd ") {
		out = append(out, span{lvlCrit, " etcd unreachable"})
	}
	return out
}

// sourceProblem is the exact failure to show under the header, or "".
func sourceProblem(s *model.Snapshot) span {
	if s == nil || s.Source.Detail == "" {
		return span{}
	}
	switch s.Source.Health {
	case "ok", "":
		return span{}
	case "degraded":
		return span{lvlWarn, s.Source.Detail}
	}
	return span{lvlCrit, s.Source.Detail}
}

// sourceWarnings are the problems with fgtop's own sources that change
// what every number means, shown under the header rather than only in the
// issue list: a scratch root that is missing or not a directory (its
// kernels are not counted at all), an agent.toml on disk that cannot be
// used (the partition shown is the last good one).
func sourceWarnings(s *model.Snapshot) []span {
	if s == nil {
		return nil
	}
	var out []span
	var roots []string
	cfgErrs := 0
	for _, iss := range s.Issues {
		switch {
		case iss.Code == model.IssueRootMissing:
			roots = append(roots, iss.Message)
		case iss.Code == model.IssueConfig && iss.Severity == model.SevError && strings.Contains(iss.Message, "cannot be used"):
			out = append(out, span{lvlCrit, iss.Message})
		case iss.Code == model.IssueConfig && iss.Severity == model.SevError:
			cfgErrs++
		case iss.Code == model.IssuePluginSettings && iss.Severity == model.SevError:
			// etcd unreachable: the capacities shown may be stale or unknown.
			out = append(out, span{lvlCrit, iss.Message})
		}
	}
	if cfgErrs > 0 {
		// The agent refuses to load (or to start with) this file at its
		// next restart: as loud as the draft-format warning, and not
		// only in the issue list.
		out = append(out, span{lvlCrit, fmt.Sprintf("agent.toml has %d error(s): the agent will not start with it (see Issues)", cfgErrs)})
	}
	switch len(roots) {
	case 0:
	case 1:
		out = append(out, span{lvlCrit, roots[0]})
	default:
		out = append(out, span{lvlCrit, strconv.Itoa(len(roots)) + " scratch roots missing or not directories: their kernels are not counted"})
	}
	return out
}

// restartPending is the header's "restart pending" when the agent.toml on
// disk is newer than the agent process that runs it.
func restartPending(s *model.Snapshot) span {
	if s == nil {
		return span{}
	}
	for _, a := range s.Agents {
		if a.Restart.State == model.RestartPending {
			return span{lvlWarn, "restart pending"}
		}
	}
	return span{}
}

// agentsDown is the header's count of agents that do not answer GET
// /health ("1 agent down"); unreachable ones count with the down.
func agentsDown(s *model.Snapshot) span {
	if s == nil {
		return span{}
	}
	n := 0
	for _, a := range s.Agents {
		if a.Health.State == model.AgentDown || a.Health.State == model.AgentUnreachable {
			n++
		}
	}
	if n == 0 {
		return span{}
	}
	return span{lvlCrit, plural(n, "agent") + " down"}
}

// updatedSpan is the time since the snapshot, turning to a warning when
// the engine has gone quiet.
func updatedSpan(s *model.Snapshot, now time.Time) span {
	if s == nil || s.Time.IsZero() {
		return span{}
	}
	age := now.Sub(s.Time)
	lvl := lvlDim
	switch {
	case age > time.Minute:
		lvl = lvlCrit
	case age > 10*time.Second:
		lvl = lvlWarn
	}
	return span{lvl, "updated " + fmtAge(age) + " ago"}
}

// headerPieces are the header's parts for the current state.
func (a *App) headerPieces() []headerPiece {
	s := a.snap
	ps := append(a.pastBanner(), []headerPiece{
		{spans: []span{{lvlAccent, "fgtop"}, {lvlPlain, " "}, {lvlTitle, a.nodeName()}}},
		{spans: []span{sourceBadge(s)}},
	}...)
	if p := pluginBadge(s); p != nil {
		ps = append(ps, headerPiece{spans: p, drop: 3})
	}
	if s != nil {
		var mode []span
		if s.Mode != "" {
			mode = append(mode, span{lvlPlain, s.Mode}, span{lvlDim, " " + a.st.G.Dot + " "})
		}
		mode = append(mode, span{lvlPlain, plural(len(s.Agents), "agent")})
		ps = append(ps, headerPiece{spans: mode, drop: 4})
		ks := []span{{lvlPlain, plural(s.NumKernels(), "kernel")}}
		if n := a.d.states.stale + a.d.states.broken; n > 0 {
			ks = append(ks, span{lvlWarn, " (" + strconv.Itoa(n) + " unreadable)"})
		}
		ps = append(ps, headerPiece{spans: ks, drop: 3})
		if n := len(s.Issues); n > 0 {
			lvl := lvlWarn
			if s.Issues[0].Severity == model.SevError {
				lvl = lvlCrit
			}
			ps = append(ps, headerPiece{spans: []span{{lvl, plural(n, "issue")}}, drop: 2})
		}
		if r := restartPending(s); r.text != "" {
			ps = append(ps, headerPiece{spans: []span{r}, drop: 2})
		}
		if d := agentsDown(s); d.text != "" {
			ps = append(ps, headerPiece{spans: []span{d}, drop: 2})
		}
		if u := updatedSpan(s, a.now()); u.text != "" {
			ps = append(ps, headerPiece{spans: []span{u}, drop: 1, right: true})
		}
	}
	// Every console sharing the desk, viewers too, says who holds the
	// partition draft and that a written agent.toml waits for a restart.
	if a.deskHold != nil {
		ps = append(ps, headerPiece{spans: a.deskHold, drop: 3})
	}
	if a.deskWrite != nil {
		ps = append(ps, headerPiece{spans: a.deskWrite, drop: 5})
	}
	if a.closed {
		ps = append(ps, headerPiece{spans: []span{{lvlCrit, "engine stopped"}}, right: true})
	}
	if a.keys.Role() == RoleViewer {
		ps = append(ps, headerPiece{spans: []span{{lvlBadge, " " + a.st.G.Lock + " "}}, right: true})
	}
	return ps
}

// viewHeader draws the header: one line, plus a second one for the
// BEP-1044 warning and the exact device-source failure when there are.
func (a *App) viewHeader(w int) []string {
	ps := a.headerPieces()
	const sep = " │ "
	// The width the pieces need: " │ " between left pieces, a space
	// between right ones and at least sideGap between the two sides, so
	// "since 15:21" and "updated 0s ago" never read as one phrase.
	const sideGap = 2
	total := func() int {
		n, left, right := 0, 0, 0
		for _, p := range ps {
			n += spansWidth(p.spans)
			if p.right {
				right++
			} else {
				left++
			}
		}
		return n + 3*max(left-1, 0) + max(right-1, 0) + sideGap
	}
	var dropped []headerPiece
	for total() > w {
		worst := -1
		for i, p := range ps {
			if p.drop > 0 && (worst < 0 || p.drop > ps[worst].drop) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		dropped = append([]headerPiece{ps[worst]}, dropped...)
		ps = append(ps[:worst], ps[worst+1:]...)
	}
	l := newLine(paint{})
	var left, right []headerPiece
	for _, p := range ps {
		if p.right {
			right = append(right, p)
		} else {
			left = append(left, p)
		}
	}
	rightW := 0
	for i, p := range right {
		rightW += spansWidth(p.spans)
		if i > 0 {
			rightW++
		}
	}
	avail := max(w-rightW-sideGap, 0)
	for i, p := range left {
		if i > 0 {
			if l.w+3 > avail {
				break
			}
			l.putW(a.st.Border, a.sepGlyph(sep), 3)
		}
		putSpans(l, a.st, p.spans, avail-l.w)
	}
	l.gap(w - rightW - l.w)
	for i, p := range right {
		if i > 0 {
			l.gap(1)
		}
		putSpans(l, a.st, p.spans, w-l.w)
	}
	out := []string{l.finish(w)}
	// A second line for the exact device-source failure and for what did
	// not fit on the first (narrow terminals), in that order.
	var second []span
	if a.snap != nil && a.snap.DraftFormat {
		// First on a line of its own, whole on any width: an agent
		// restarted on this file does not start.
		second = append(second, span{lvlDim, "  "}, span{lvlCrit, agentconfig.DraftFormatWarning})
	}
	if prob := sourceProblem(a.snap); prob.text != "" {
		if len(second) > 0 {
			second = append(second, span{lvlBorder, a.sepGlyph(sep)}, prob)
		} else {
			second = append(second, span{lvlDim, "  "}, prob)
		}
	}
	for _, wsp := range sourceWarnings(a.snap) {
		if len(second) > 0 {
			second = append(second, span{lvlBorder, a.sepGlyph(" │ ")})
		} else {
			second = append(second, span{lvlDim, "  "})
		}
		second = append(second, wsp)
	}
	for _, p := range dropped {
		// A piece that does not fit whole is left out rather than cut to
		// a stub ("ma…" said nothing).
		if len(second) > 0 && spansWidth(second)+3+spansWidth(p.spans) > w {
			continue
		}
		if len(second) > 0 {
			second = append(second, span{lvlBorder, a.sepGlyph(sep)})
		} else {
			second = append(second, span{lvlDim, "  "})
		}
		second = append(second, p.spans...)
	}
	if len(second) > 0 {
		l2 := newLine(paint{})
		putSpans(l2, a.st, second, w)
		out = append(out, l2.finish(w))
	}
	return out
}

func (a *App) sepGlyph(sep string) string {
	if a.st.ASCII {
		return " | "
	}
	return sep
}
