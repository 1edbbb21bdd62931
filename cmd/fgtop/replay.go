package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/replay"
	"github.com/fgtop/fgtop/internal/cliwords"
	"github.com/fgtop/fgtop/internal/jsonout"
	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/model"
	"github.com/spf13/cobra"
)

// replayFlags are plan's flags that replay the recorded sessions.
type replayFlags struct {
	span, since, until, dir string
	suggest                 bool
	// arrivals replays sessions from a file instead of the record.
	arrivals string
	// changed is replay.Ask's Given.
	changed func(name string) bool
}

func (f *replayFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.span, "replay", "", "replay the sessions the history recorded over SPAN (such as 7d, the record's usual week; 36h; 1d12h) under the partition in force, and under the change when the flags make one")
	fl.StringVar(&f.since, "since", "", "with --replay: the span starts at this time (RFC 3339, 2026-11-27 14:02, 14:02, yesterday, -2h, -1d), as history takes it")
	fl.StringVar(&f.until, "until", "", "with --replay: the span ends at this time (default now); not with --since")
	fl.StringVar(&f.dir, "history", "", "with --replay: the history directory ("+historyDefaultUsage()+")")
	fl.StringVar(&f.arrivals, "arrivals", "", "replay the sessions of FILE instead of the record: CSV start,end,agent,slots or JSON lines (docs/replay.md), under today's partition and the change")
	fl.BoolVar(&f.suggest, "suggest", false, "with --replay: find the slot amounts per agent under which every recorded session starts (else the fewest refused), nearest today's file, and plan them")
	f.changed = fl.Changed
}

// on says whether the flags ask for a replay (replay.Ask); its errors
// are usage errors.
func (f *replayFlags) on() (bool, error) {
	on, err := replay.Ask{Span: f.span, Since: f.since, Until: f.until, Dir: f.dir, Arrivals: f.arrivals, Suggest: f.suggest, Given: f.changed}.On()
	if err != nil {
		return false, usageErr("%w", err)
	}
	return on, nil
}

// window is the span the flags name, relative to now (replay.Window);
// its errors are usage errors.
func (f *replayFlags) window(now time.Time) (from, to time.Time, err error) {
	if from, to, err = replay.Window(f.span, f.since, f.until, now); err != nil {
		return from, to, usageErr("%w", err)
	}
	return from, to, nil
}

// runPlanReplay is plan --replay: the record's sessions replayed under the
// partition in force (the fidelity check) and, when the change flags make
// one, under the proposal. Exit 0 when every session starts, 1 when some
// would not have, 2 on bad usage or an invalid plan.
func runPlanReplay(ctx context.Context, out, errw io.Writer, src *sourceFlags, ch *changeFlags, rf *replayFlags, asJSON bool) error {
	var rec *replay.Record
	var sg *replay.Suggestion
	// The run under the partitions in force, started beside the
	// suggestion's search where there is one: it depends on nothing the
	// search finds.
	var asWas *replay.Pending
	if rf.suggest {
		var flags []string
		var err error
		started := func(rec *replay.Record) {
			asWas = replay.Start(rec, rec.AsItWas(), replay.Options{Fidelity: true, Word: replay.WordFor(asJSON)})
		}
		if flags, sg, rec, err = suggestSlotsThen(ctx, src, ch, rf, "plan", started); err != nil {
			return err
		}
		ch.slots = flags
	}
	if rf.arrivals != "" {
		return runArrivals(ctx, out, src, ch, rf, asJSON)
	}
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
	// cfgAgents are the config's agents, where it names them all: the
	// record's must share one, or it is another node's.
	var cfgAgents []model.AgentID
	if req.Empty() && src.config != "" {
		// The fidelity check replays the partitions the record holds, but
		// a file named and not read would look checked: one that does not
		// load is refused as every other plan refuses it.
		cfg, err := agentconfig.Load(src.config)
		if cfg == nil {
			return configErr(src.config, false, err)
		}
		cfgAgents = cfg.NamedAgentIDs()
		fmt.Fprintf(errw, "fgtop plan: note: with no change flag the replay judges the partitions the record holds; %s is read only to check it loads\n", src.config)
	}
	var plan *partition.Plan
	if !req.Empty() {
		if plan, _, err = buildPlan(ctx, src, ch, "plan"); err != nil {
			return err
		}
		if plan.Next != nil {
			cfgAgents = plan.Next.NamedAgentIDs()
		}
		if !plan.Valid() {
			if sg != nil && !asJSON {
				// What the suggestion kept and why comes before the
				// plan that judges it.
				sg.WriteText(out, ch.slots)
			}
			return invalidPlan(out, plan, asJSON)
		}
	}
	if rec == nil {
		// The run under the partitions in force is fed as the record
		// is read, on the core the read leaves free.
		if rec, asWas, err = replay.LoadSpanStarted(dir, from, to, replay.Options{Fidelity: true, Word: replay.WordFor(asJSON), Fed: os.Getenv("FGTOP_REPLAY_FED") == "1"}); err != nil {
			return loadErr(err)
		}
	}
	if why := rec.Foreign(cfgAgents); why != "" {
		// A proposal for agents the record never saw would be judged on
		// nothing (the tour replayed the demo's record under a real
		// node's file and got a verdict for the demo's agents).
		if plan != nil {
			return usageErr("the record in %s %s: replay a node's record with that node's agent.toml", dir, why)
		}
		fmt.Fprintf(errw, "fgtop plan: note: the record in %s %s; what follows judges the record by its own partitions\n", dir, why)
	}
	doc := replay.Judge(rec, asWas, plan, replay.WordFor(asJSON))
	if sg != nil {
		doc.SetSuggestion(sg)
	}
	if err := written(writeReplay(out, asJSON, sg, ch.slots, plan, doc)); err != nil {
		return err
	}
	if why := doc.Shortfall(); why != "" {
		return &exitError{code: exitProblem, err: errors.New(why)}
	}
	return nil
}

// loadErr is the exit status of a record that could not be replayed:
// one with nothing to replay is bad usage, not 1 (some would not have
// started), which a script would read as refusals; a damaged one is a
// problem.
func loadErr(err error) error {
	if err == nil {
		return nil
	}
	var span *replay.SpanError
	if errors.As(err, &span) && span.Empty() {
		if h := span.Hint(); h != "" {
			err = fmt.Errorf("%w (%s)", err, h)
		}
		return &exitError{code: exitBadUsage, err: err}
	}
	return &exitError{code: exitProblem, err: err}
}

// suggestSlotsThen is --suggest: the record's sessions and today's file
// give the --slot flags of the amounts replay.Suggest finds. loaded (when
// not nil) is called with the record as soon as it is read, before the
// search.
func suggestSlotsThen(ctx context.Context, src *sourceFlags, ch *changeFlags, rf *replayFlags, cmdName string, loaded func(*replay.Record)) ([]string, *replay.Suggestion, *replay.Record, error) {
	if len(ch.slots) > 0 || len(ch.moves) > 0 || ch.mode != "" || len(ch.cpu) > 0 || len(ch.mem) > 0 || ch.from != "" {
		return nil, nil, nil, usageErr("--suggest makes the change itself: drop --slot, --move, --mode, --cpu, --mem and --from")
	}
	from, to, err := rf.window(time.Now())
	if err != nil {
		return nil, nil, nil, err
	}
	dir, err := readHistoryDir(rf.dir)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, snap, _, err := nodeState(ctx, src, cmdName)
	if err != nil {
		return nil, nil, nil, err
	}
	node := replay.OnNode(cfg, snap)
	if err := node.Slotted(); err != nil {
		return nil, nil, nil, usageErr("--suggest: %w", err)
	}
	rec, err := replay.LoadSpan(dir, from, to)
	if err != nil {
		return nil, nil, nil, loadErr(err)
	}
	// Amounts suggested from another node's record would be cut to what
	// its agents, none of them these, never used: nothing.
	if why := node.Foreign(rec); why != "" {
		return nil, nil, nil, usageErr("--suggest: the record in %s %s: suggest from a node's record with that node's agent.toml", dir, why)
	}
	if loaded != nil {
		loaded(rec)
	}
	flags, sg, err := node.Suggest(rec)
	if err != nil {
		return nil, nil, nil, usageErr("--suggest: %w", err)
	}
	return flags, sg, rec, nil
}

// runArrivals is plan --arrivals FILE: the file's sessions on this node,
// under today's partition and, with change flags, under the proposal.
func runArrivals(ctx context.Context, out io.Writer, src *sourceFlags, ch *changeFlags, rf *replayFlags, asJSON bool) error {
	req, err := ch.request()
	if err != nil {
		return err
	}
	data, err := safefile.ReadFile(rf.arrivals, replay.MaxArrivalsBytes)
	if err != nil {
		if w := cliwords.MissingFile(err); w != "" {
			return usageErr("--arrivals %s: %s", rf.arrivals, w)
		}
		return usageErr("--arrivals: %v", err)
	}
	sessions, err := replay.ParseArrivals(data, nil)
	if err != nil {
		return usageErr("--arrivals %s:\n%v", rf.arrivals, err)
	}
	cfg, snap, _, err := nodeState(ctx, src, "plan")
	if err != nil {
		return err
	}
	rec, err := replay.OnNode(cfg, snap).Arrivals(sessions)
	if err != nil {
		return usageErr("--arrivals %s:\n%v", rf.arrivals, err)
	}
	var plan *partition.Plan
	if !req.Empty() {
		if plan, _, err = buildPlan(ctx, src, ch, "plan"); err != nil {
			return err
		}
		if !plan.Valid() {
			return invalidPlan(out, plan, asJSON)
		}
	}
	doc := replay.Compare(rec, replay.ProposalOf(rec, plan), false, replay.WordFor(asJSON))
	if err := written(writeReplay(out, asJSON, nil, nil, plan, doc)); err != nil {
		return err
	}
	if !doc.ServesAll {
		return &exitError{code: exitProblem, err: fmt.Errorf("%d of %d session(s) of %s would not have started", doc.RefusedCount(), doc.Sessions, rf.arrivals)}
	}
	return nil
}

// invalidPlan prints a plan a replay refuses to judge, as plan prints
// it (--json: its JSON, which a script reads as plan --json's), and is
// the refusal.
func invalidPlan(out io.Writer, plan *partition.Plan, asJSON bool) error {
	if asJSON {
		jsonout.Write(out, planDoc{planSchema, plan})
	} else {
		plan.WriteText(out)
	}
	return &exitError{code: exitBadUsage, err: fmt.Errorf("the plan is invalid (%d error(s)): fix the request or the config as the plan says; nothing was replayed", len(plan.Errors))}
}

// writeReplay prints a replay's document (--json), or the suggestion,
// the plan and the replay as text (replay.WriteJudged), buffered.
func writeReplay(out io.Writer, asJSON bool, sg *replay.Suggestion, flags []string, plan *partition.Plan, doc *replay.Doc) error {
	bw := bufio.NewWriterSize(out, 64<<10)
	if asJSON {
		jsonout.Write(bw, doc)
	} else {
		replay.WriteJudged(bw, sg, flags, plan, doc)
	}
	return bw.Flush()
}
