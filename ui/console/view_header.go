package console

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
)

// headerPiece is a part of the header line; when the line is too narrow
// the pieces with the highest drop value go first.
type headerPiece struct {
	spans []kit.Span
	drop  int // 0: never dropped
	right bool
	// lead: when dropped, the piece opens the second line, ahead of the
	// warnings there, instead of following them where room is left. Its
	// narrow form, if any, replaces it there.
	lead   bool
	narrow []kit.Span
	// short is a shorter form of a piece never dropped, taken when the
	// first line cannot hold even those (the node's name and health must
	// stay whole); spill is what it leaves out, said on the second line.
	short, spill []kit.Span
}

// sourceBadge says where devices come from and how healthy that is.
func sourceBadge(s *model.Snapshot) kit.Span {
	if s == nil {
		return kit.Span{Lvl: kit.LvlDim, Text: "waiting for the engine"}
	}
	src := s.Source
	name := src.Kind
	switch src.Kind {
	case "nvml":
		name = "NVML"
	case "mock":
		return kit.Span{Lvl: kit.LvlOK, Text: "mock devices"}
	case "demo":
		// Said in the header, not only in a detail: every figure in the
		// device rows is made up.
		return kit.Span{Lvl: kit.LvlWarn, Text: "demo (synthetic telemetry)"}
	case "none", "":
		return kit.Span{Lvl: kit.LvlCrit, Text: "no devices"}
	}
	switch src.Health {
	case "ok", "":
		return kit.Span{Lvl: kit.LvlOK, Text: name + " ok"}
	case "degraded":
		return kit.Span{Lvl: kit.LvlWarn, Text: name + " degraded"}
	}
	return kit.Span{Lvl: kit.LvlCrit, Text: name + " " + src.Health}
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
func pluginBadge(s *model.Snapshot) []kit.Span {
	if s == nil || s.Plugin == nil {
		return nil
	}
	p := s.Plugin
	out := []kit.Span{{Lvl: kit.LvlPlain, Text: pluginName(p.Kind)}, {Lvl: kit.LvlDim, Text: " (" + p.Source + ")"}}
	if !p.SettingsOK && strings.HasPrefix(p.Settings, "etcd ") {
		out = append(out, kit.Span{Lvl: kit.LvlCrit, Text: " etcd unreachable"})
	}
	return out
}

// sourceProblem is the exact failure to show under the header, or "".
func sourceProblem(s *model.Snapshot) kit.Span {
	if s == nil || s.Source.Detail == "" {
		return kit.Span{}
	}
	switch s.Source.Health {
	case "ok", "":
		return kit.Span{}
	case "degraded":
		return kit.Span{Lvl: kit.LvlWarn, Text: s.Source.Detail}
	}
	return kit.Span{Lvl: kit.LvlCrit, Text: s.Source.Detail}
}

// sourceWarnings are the problems with fgtop's own sources that change
// what every number means, shown under the header rather than only in the
// issue list: a scratch root that is missing or not a directory (its
// kernels are not counted at all), an agent.toml on disk that cannot be
// used (the partition shown is the last good one).
func sourceWarnings(s *model.Snapshot, w int) []kit.Span {
	if s == nil {
		return nil
	}
	var out []kit.Span
	var roots []model.Issue
	cfgErrs := 0
	for _, iss := range s.Issues {
		switch {
		case iss.Code == model.IssueRootMissing:
			roots = append(roots, iss)
		case iss.Code == model.IssueConfig && iss.Severity == model.SevError && strings.Contains(iss.Message, "still showing the partition last read"):
			// Every way the file on disk stops being usable says this: one
			// that does not load, and one gone or unreadable, which used
			// to be counted below as an agent.toml with errors ("the agent
			// will not start with it", of a file that is not there).
			text := iss.Message
			if kit.Width(text)+2 > w {
				// At 80 columns the message, led by the loader's error, was
				// cut before "still showing the partition last read".
				switch {
				case strings.Contains(text, " is gone ("):
					text = "agent.toml is gone: showing the partition last read"
				case strings.Contains(text, " can no longer be read "):
					text = "agent.toml cannot be read: showing the partition last read"
				default:
					text = "agent.toml on disk cannot be used: showing the partition last read"
				}
			}
			out = append(out, kit.Span{Lvl: kit.LvlCrit, Text: text})
		case iss.Code == model.IssueConfig && iss.Severity == model.SevError:
			cfgErrs++
		case iss.Code == model.IssuePluginSettings && iss.Severity == model.SevError:
			// etcd unreachable: the capacities shown may be stale or unknown.
			text := iss.Message
			if kit.Width(text)+2 > w {
				// At 80 columns the line was cut at "cannot read the CUDA
				// plugin~": what failed first (unreachable, or its user),
				// the rest left to the issue list.
				text = etcdShort(text)
			}
			out = append(out, kit.Span{Lvl: kit.LvlCrit, Text: text})
		}
	}
	if cfgErrs > 0 {
		// The agent refuses to load (or to start with) this file at its
		// next restart: as loud as the draft-format warning, and not
		// only in the issue list.
		out = append(out, kit.Span{Lvl: kit.LvlCrit, Text: fmt.Sprintf("agent.toml has %d error(s): the agent will not start with it (see Issues)", cfgErrs)})
	}
	switch len(roots) {
	case 0:
	case 1:
		text := roots[0].Message
		if kit.Width(text)+2 > w {
			// What it means first, the path left to the issue list: at 80
			// columns "scratch root /var/…/scratches of agent i-node-b is
			// missing" was cut "is mis…", and never said what it costs.
			text = "the kernels under " + roots[0].File + " are not counted: the scratch root is missing"
			if roots[0].Agent != "" {
				text = "agent " + string(roots[0].Agent) + "'s kernels are not counted: its scratch root is missing"
			}
		}
		out = append(out, kit.Span{Lvl: kit.LvlCrit, Text: text})
	default:
		out = append(out, kit.Span{Lvl: kit.LvlCrit, Text: strconv.Itoa(len(roots)) + " scratch roots missing or not directories: their kernels are not counted"})
	}
	return out
}

// etcdShort is the plugin settings' etcd error (engine/plugin's "etcd at
// ADDR: cannot read the CUDA plugin settings (WHY): KEPT") said short,
// the essential first: etcd unreachable, or which of its credentials it
// refused; the rest is in the issue list.
func etcdShort(msg string) string {
	at, _, _ := strings.Cut(msg, ": ")
	switch {
	case strings.Contains(msg, "sets no user"):
		return at + " wants a user: [etcd] sets none"
	case strings.Contains(msg, "refused the user and password"):
		return at + " refused [etcd] user/password"
	case strings.Contains(msg, "may not read the plugin settings"):
		return at + " denies [etcd] user the settings"
	}
	return at + " unreachable"
}

// restartPending is the header's "restart pending" when the agent.toml on
// disk is newer than the agent process that runs it.
func restartPending(s *model.Snapshot) kit.Span {
	if s == nil {
		return kit.Span{}
	}
	for _, a := range s.Agents {
		if a.Restart.State == model.RestartPending {
			return kit.Span{Lvl: kit.LvlWarn, Text: "restart pending"}
		}
	}
	return kit.Span{}
}

// agentsDown is the header's count of agents that do not answer GET
// /health ("1 agent down"); unreachable ones count with the down.
func agentsDown(s *model.Snapshot) kit.Span {
	if s == nil {
		return kit.Span{}
	}
	n := 0
	for _, a := range s.Agents {
		if a.Health.State == model.AgentDown || a.Health.State == model.AgentUnreachable {
			n++
		}
	}
	if n == 0 {
		return kit.Span{}
	}
	return kit.Span{Lvl: kit.LvlCrit, Text: kit.Plural(n, "agent") + " down"}
}

// updatedSpan is the time since the snapshot, turning to a warning when
// the engine has gone quiet, and the instant it next reads otherwise
// (zero for none).
func updatedSpan(s *model.Snapshot, now time.Time) (kit.Span, time.Time) {
	if s == nil || s.Time.IsZero() {
		return kit.Span{}, time.Time{}
	}
	age := now.Sub(s.Time)
	next := s.Time.Add(kit.AgeNext(age))
	for _, turn := range []time.Duration{10 * time.Second, time.Minute} {
		// The level turns just past 10 s and a minute.
		if at := s.Time.Add(turn + 1); age <= turn && at.Before(next) {
			next = at
		}
	}
	lvl := kit.LvlDim
	switch {
	case age > time.Minute:
		lvl = kit.LvlCrit
	case age > 10*time.Second:
		lvl = kit.LvlWarn
	}
	return kit.Span{Lvl: lvl, Text: "updated " + kit.FmtAge(age) + " ago"}, next
}

// headerPieces are the header's parts for the current state.
func (a *App) headerPieces() []headerPiece {
	s := a.Snap
	// The header is drawn for each snapshot by each of serve's sessions
	// (its height lays the panes out): the pieces and their spans go
	// into the App's scratch, memory of the last header, not memory of
	// their own each time (viewHeader keeps a deep copy when it draws).
	a.hdrSpans = a.hdrSpans[:0]
	ps := append(a.hdrPieces[:0], a.pastBanner()...)
	ps = append(ps, a.verdictBanner()...)
	ps = append(ps,
		headerPiece{spans: a.hdrSpan(kit.Span{Lvl: kit.LvlAccent, Text: "fgtop"}, kit.Span{Lvl: kit.LvlPlain, Text: " "}, kit.Span{Lvl: kit.LvlTitle, Text: a.NodeName()})},
		headerPiece{spans: a.hdrSpan(sourceBadge(s))},
	)
	if p := pluginBadge(s); p != nil {
		// The rule that decided is what the bars mean: on a narrow
		// terminal it opens the second line, where the etcd warning (if
		// any) already says etcd cannot be read.
		ps = append(ps, headerPiece{spans: p, drop: 3, lead: true, narrow: p[:2]})
	}
	if s != nil {
		agents := kit.Span{Lvl: kit.LvlPlain, Text: kit.Plural(len(s.Agents), "agent")}
		mode := a.hdrSpan(agents)
		if s.Mode != "" {
			mode = a.hdrSpan(kit.Span{Lvl: kit.LvlPlain, Text: s.Mode}, kit.Span{Lvl: kit.LvlDim, Text: " " + a.St.G.Dot + " "}, agents)
		}
		ps = append(ps, headerPiece{spans: mode, drop: 4})
		kernels := kit.Span{Lvl: kit.LvlPlain, Text: kit.Plural(s.NumKernels(), "kernel")}
		if n := s.SummaryKernels; n != nil {
			// Its rows are its agents' holdings; the count is the node's.
			kernels.Text = kit.Plural(*n, "kernel")
		}
		ks := a.hdrSpan(kernels)
		if n := a.d.States.Stale + a.d.States.Broken; n > 0 {
			ks = a.hdrSpan(kernels, kit.Span{Lvl: kit.LvlWarn, Text: " (" + strconv.Itoa(n) + " unreadable)"})
		}
		ps = append(ps, headerPiece{spans: ks, drop: 3})
		if n := len(s.Issues); n > 0 {
			lvl := kit.LvlWarn
			if s.Issues[0].Severity == model.SevError {
				lvl = kit.LvlCrit
			}
			ps = append(ps, headerPiece{spans: a.hdrSpan(kit.Span{Lvl: lvl, Text: kit.Plural(n, "issue")}), drop: 2})
		}
		if r := restartPending(s); r.Text != "" {
			if a.Keys.Offers(ActDemoRestart) {
				// The demo's agents restart on a key the operator has to
				// know of (real agents restart outside fgtop).
				if a.ed() != nil {
					// In the editor R lists the draft's refusals.
					r.Text += " (esc, then R restarts)"
				} else {
					r.Text += " (R restarts)"
				}
			}
			ps = append(ps, headerPiece{spans: a.hdrSpan(r), drop: 2})
		}
		if d := agentsDown(s); d.Text != "" {
			ps = append(ps, headerPiece{spans: a.hdrSpan(d), drop: 2})
		}
		u, _ := updatedSpan(s, a.Now())
		if a.composing {
			// Not noted as a change: a snapshot of the same content
			// renews it each second; checkStale compares it instead.
			a.shownUpdated = u
		}
		if u.Text != "" {
			ps = append(ps, headerPiece{spans: a.hdrSpan(u), drop: 1, right: true})
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
	if a.opts.Unrecorded != "" && a.opts.History == "" {
		ps = append(ps, headerPiece{spans: a.hdrSpan(kit.Span{Lvl: kit.LvlWarn, Text: a.opts.Unrecorded}), drop: 2})
	}
	if a.Closed {
		ps = append(ps, headerPiece{spans: a.hdrSpan(kit.Span{Lvl: kit.LvlCrit, Text: "engine stopped"}), right: true})
	}
	if a.Keys.Role() == kit.RoleViewer {
		ps = append(ps, headerPiece{spans: a.hdrSpan(kit.Span{Lvl: kit.LvlBadge, Text: " " + a.St.G.Lock + " "}), right: true})
	}
	a.hdrPieces = ps
	return ps
}

// hdrSpan is spans in the header's scratch (headerPieces), valid until
// the next header is made: capped, so that appending to it copies.
func (a *App) hdrSpan(spans ...kit.Span) []kit.Span {
	n := len(a.hdrSpans)
	a.hdrSpans = append(a.hdrSpans, spans...)
	return a.hdrSpans[n:len(a.hdrSpans):len(a.hdrSpans)]
}

// clonePieces copies pieces whose spans may be the header's scratch.
func clonePieces(ps []headerPiece) []headerPiece {
	c := slices.Clone(ps)
	for i := range c {
		p := &c[i]
		p.spans, p.narrow, p.short, p.spill = slices.Clone(p.spans), slices.Clone(p.narrow), slices.Clone(p.short), slices.Clone(p.spill)
	}
	return c
}

// viewHeader draws the header: one line, plus a second one for the
// BEP-1044 warning and the exact device-source failure when there are.
func (a *App) viewHeader(w int) []string {
	ps := a.headerPieces()
	m := a.memo
	if m == nil {
		return a.viewHeaderOf(ps, w)
	}
	in := headerIn{st: a.St, w: w, pieces: ps, draft: a.Snap != nil && a.Snap.DraftFormat,
		prob: sourceProblem(a.Snap), warn: sourceWarnings(a.Snap, w)}
	if m.header != nil && m.headerIn.same(&in) {
		return m.header
	}
	// viewHeaderOf reorders ps, and the next header reuses their spans.
	in.pieces = clonePieces(ps)
	out := a.viewHeaderOf(ps, w)
	m.headerIn, m.header = in, out[:len(out):len(out)]
	return m.header
}

// headerIn is what the header is drawn from.
type headerIn struct {
	st     *kit.Styles
	w      int
	pieces []headerPiece
	draft  bool
	prob   kit.Span
	warn   []kit.Span
}

func (h *headerIn) same(o *headerIn) bool {
	return h.st == o.st && h.w == o.w && h.draft == o.draft && h.prob == o.prob && slices.Equal(h.warn, o.warn) &&
		slices.EqualFunc(h.pieces, o.pieces, func(a, b headerPiece) bool {
			return a.drop == b.drop && a.right == b.right && a.lead == b.lead && slices.Equal(a.spans, b.spans) &&
				slices.Equal(a.narrow, b.narrow) && slices.Equal(a.short, b.short) && slices.Equal(a.spill, b.spill)
		})
}

// viewHeaderOf lays the pieces out on one line, or two.
func (a *App) viewHeaderOf(ps []headerPiece, w int) []string {
	const sep = " │ "
	// The width the pieces need: " │ " between left pieces, a space
	// between right ones and at least sideGap between the two sides, so
	// "since 15:21" and "updated 0s ago" never read as one phrase.
	const sideGap = 2
	total := func() int {
		n, left, right := 0, 0, 0
		for _, p := range ps {
			n += kit.SpansWidth(p.spans)
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
			i := slices.IndexFunc(ps, func(p headerPiece) bool { return p.short != nil })
			if i < 0 {
				break
			}
			if ps[i].spill != nil {
				dropped = append([]headerPiece{{spans: ps[i].spill}}, dropped...)
			}
			ps[i].spans, ps[i].short, ps[i].spill = ps[i].short, nil, nil
			continue
		}
		dropped = append([]headerPiece{ps[worst]}, dropped...)
		ps = append(ps[:worst], ps[worst+1:]...)
	}
	l := kit.NewLine(kit.Paint{})
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
		rightW += kit.SpansWidth(p.spans)
		if i > 0 {
			rightW++
		}
	}
	avail := max(w-rightW-sideGap, 0)
	for i, p := range left {
		if i > 0 {
			if l.W+3 > avail {
				break
			}
			l.PutW(a.St.Border, a.sepGlyph(sep), 3)
		}
		kit.PutSpans(l, a.St, p.spans, avail-l.W)
	}
	l.Gap(w - rightW - l.W)
	for i, p := range right {
		if i > 0 {
			l.Gap(1)
		}
		kit.PutSpans(l, a.St, p.spans, w-l.W)
	}
	out := []string{l.Finish(w)}
	// A second line for the exact device-source failure and for what did
	// not fit on the first (narrow terminals), in that order.
	var second []kit.Span
	if a.Snap != nil && a.Snap.DraftFormat {
		// First on a line of its own, whole on any width: an agent
		// restarted on this file does not start.
		second = append(second, kit.Span{Lvl: kit.LvlDim, Text: "  "}, kit.Span{Lvl: kit.LvlCrit, Text: agentconfig.DraftFormatWarning})
	}
	for _, p := range dropped {
		if !p.lead {
			continue
		}
		if len(second) > 0 {
			second = append(second, kit.Span{Lvl: kit.LvlBorder, Text: a.sepGlyph(sep)})
		} else {
			second = append(second, kit.Span{Lvl: kit.LvlDim, Text: "  "})
		}
		if p.narrow != nil {
			second = append(second, p.narrow...)
		} else {
			second = append(second, p.spans...)
		}
	}
	// What makes every number wrong (an agent.toml the agent will not
	// start with, a scratch root gone, etcd unreachable) before the
	// device source's state: at 80 columns the source's "no GPU source:
	// NVML library not found" pushed "agent.toml has 3 error(s)" off the
	// line (the tour).
	for _, wsp := range sourceWarnings(a.Snap, w) {
		if len(second) > 0 {
			second = append(second, kit.Span{Lvl: kit.LvlBorder, Text: a.sepGlyph(" │ ")})
		} else {
			second = append(second, kit.Span{Lvl: kit.LvlDim, Text: "  "})
		}
		second = append(second, wsp)
	}
	if prob := sourceProblem(a.Snap); prob.Text != "" {
		if len(second) > 0 {
			second = append(second, kit.Span{Lvl: kit.LvlBorder, Text: a.sepGlyph(sep)}, prob)
		} else {
			second = append(second, kit.Span{Lvl: kit.LvlDim, Text: "  "}, prob)
		}
	}
	for _, p := range dropped {
		if p.lead {
			continue
		}
		// A piece that does not fit whole is left out rather than cut to
		// a stub ("ma…" said nothing).
		if len(second) > 0 && kit.SpansWidth(second)+3+kit.SpansWidth(p.spans) > w {
			continue
		}
		if len(second) > 0 {
			second = append(second, kit.Span{Lvl: kit.LvlBorder, Text: a.sepGlyph(sep)})
		} else {
			second = append(second, kit.Span{Lvl: kit.LvlDim, Text: "  "})
		}
		second = append(second, p.spans...)
	}
	if len(second) > 0 {
		l2 := kit.NewLine(kit.Paint{})
		kit.PutSpans(l2, a.St, second, w)
		out = append(out, l2.Finish(w))
	}
	return out
}

func (a *App) sepGlyph(sep string) string {
	if a.St.ASCII {
		return " | "
	}
	return sep
}
