package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/replay"
	"github.com/fgtop/fgtop/model"
	"github.com/spf13/cobra"
)

// replayFlags are plan's flags that replay the recorded sessions.
type replayFlags struct {
	span, since, until, dir string
}

func (f *replayFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.span, "replay", "", "replay the sessions the history recorded over SPAN (7d when given without a value) under the partition in force, and under the change when the flags make one")
	fl.Lookup("replay").NoOptDefVal = "7d"
	fl.StringVar(&f.since, "since", "", "with --replay: from this time (RFC 3339, 14:02, 2026-11-27 14:02, -2h), as history takes it")
	fl.StringVar(&f.until, "until", "", "with --replay: up to this time (default now)")
	fl.StringVar(&f.dir, "history", "", "with --replay: the history directory (default "+defaultHistoryDir+")")
}

// on says whether the flags ask for a replay; the span flags without it
// are a usage error.
func (f *replayFlags) on() (bool, error) {
	if f.span == "" {
		for name, v := range map[string]string{"--since": f.since, "--until": f.until, "--history": f.dir} {
			if v != "" {
				return false, usageErr("%s is for --replay: add --replay (7d by default) to replay the recorded sessions", name)
			}
		}
		return false, nil
	}
	return true, nil
}

// window is the span the flags name, relative to now.
func (f *replayFlags) window(now time.Time) (from, to time.Time, err error) {
	to = now
	if f.until != "" {
		if to, err = history.ParseWhen(f.until, now); err != nil {
			return from, to, usageErr("--until: %v", err)
		}
	}
	d, err := history.ParseDays(f.span)
	if err != nil || d <= 0 {
		return from, to, usageErr("--replay %q: want a span such as 7d, 36h or 1d12h", f.span)
	}
	from = to.Add(-d)
	if f.since != "" {
		if from, err = history.ParseWhen(f.since, now); err != nil {
			return from, to, usageErr("--since: %v", err)
		}
	}
	if !from.Before(to) {
		return from, to, usageErr("--until is not after --since")
	}
	return from, to, nil
}

// runPlanReplay is plan --replay: the record's sessions replayed under the
// partition in force (the fidelity check) and, when the change flags make
// one, under the proposal. Exit 0 when every session starts, 1 when some
// would not have, 2 on bad usage or an invalid plan.
func runPlanReplay(ctx context.Context, out io.Writer, src *sourceFlags, ch *changeFlags, rf *replayFlags, asJSON bool) error {
	from, to, err := rf.window(time.Now())
	if err != nil {
		return err
	}
	req, err := ch.request()
	if err != nil {
		return err
	}
	dir, err := readHistoryDir(rf.dir)
	if err != nil {
		return err
	}
	var plan *partition.Plan
	if !req.Empty() {
		if plan, _, err = buildPlan(ctx, src, ch, "plan"); err != nil {
			return err
		}
		if !plan.Valid() {
			plan.WriteText(out)
			return &exitError{code: exitBadUsage, err: fmt.Errorf("the plan is invalid (%d error(s)): fix the request or the config as the errors above say; nothing was replayed", len(plan.Errors))}
		}
	}
	rd, err := history.OpenReader(dir)
	if err != nil {
		return &exitError{code: exitProblem, err: err}
	}
	queryGC()
	rec, err := replay.Load(rd, from, to)
	if err != nil {
		return &exitError{code: exitProblem, err: fmt.Errorf("%s: %w", dir, err)}
	}
	asWas := replay.Run(rec, rec.AsItWas(), replay.Options{Fidelity: true})
	var prop *replay.Result
	if plan != nil {
		prop = replay.Run(rec, replay.Fixed(proposalAgents(rec, plan)), replay.Options{})
	}
	doc := replay.NewDoc(rec, asWas, prop)
	bw := bufio.NewWriterSize(out, 64<<10)
	if asJSON {
		writeJSON(bw, doc)
	} else {
		if plan != nil {
			plan.WriteText(bw)
			fmt.Fprintln(bw)
		}
		doc.WriteText(bw)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if !doc.ServesAll {
		return &exitError{code: exitProblem, err: fmt.Errorf("%d of %d recorded session(s) would not have started", doc.RefusedCount(), doc.Sessions)}
	}
	return nil
}

// proposalAgents are the record's agents (as at the end of the span) with
// the partition the plan would write.
func proposalAgents(rec *replay.Record, p *partition.Plan) []model.Agent {
	last := rec.Epochs[len(rec.Epochs)-1].Agents
	agents := make([]model.Agent, 0, len(last))
	for _, a := range last {
		agents = append(agents, model.Agent{ID: a.ID})
	}
	for _, ap := range p.Next.Agents {
		found := false
		for _, a := range agents {
			found = found || a.ID == ap.ID
		}
		if !found {
			agents = append(agents, model.Agent{ID: ap.ID})
		}
	}
	p.Next.Fill(agents)
	return agents
}
