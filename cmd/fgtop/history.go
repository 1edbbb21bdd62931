package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/parallel"
	"github.com/fgtop/fgtop/model"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// defaultHistoryDir is where the long-running commands record when it
// exists or can be made, and is writable; FGTOP_HISTORY overrides it,
// "off" turns recording off.
const defaultHistoryDir = "/var/lib/fgtop/history"

// historyOff is the --history value that records nothing.
const historyOff = "off"

// registerHistoryFlag adds --history DIR.
func registerHistoryFlag(fl *pflag.FlagSet, dir *string, what string) {
	fl.StringVar(dir, "history", "", what+" (default "+defaultHistoryDir+" where writable; \"off\" for none)")
}

// historyDir resolves --history for a command that records: the flag,
// else FGTOP_HISTORY, else the default where it can be written. note says
// why nothing is recorded ("" when something is, or when asked for off).
func historyDir(flag string) (dir, note string) {
	return historyDirOr(flag, defaultHistoryDir)
}

// historyDirOr is historyDir with def as the default directory, made
// (with its parents) when missing.
func historyDirOr(flag, def string) (dir, note string) {
	v := flag
	if v == "" {
		v = os.Getenv("FGTOP_HISTORY")
	}
	switch v {
	case historyOff:
		return "", ""
	case "":
	default:
		return v, ""
	}
	if err := os.MkdirAll(def, 0o700); err != nil {
		return "", fmt.Sprintf("history off: %s cannot be made (%v); record with --history DIR or `fgtop record`", def, err)
	}
	if syscall.Access(def, 2) != nil {
		return "", fmt.Sprintf("history off: %s is not writable; record with --history DIR or `fgtop record`", def)
	}
	return def, ""
}

// readHistoryDir resolves --history for a command that reads.
func readHistoryDir(flag string) (string, error) {
	v := flag
	if v == "" {
		v = os.Getenv("FGTOP_HISTORY")
	}
	if v == historyOff {
		return "", usageErr("--history off: there is no record to read")
	}
	if v == "" {
		v = defaultHistoryDir
	}
	if _, err := os.Stat(v); err != nil {
		return "", usageErr("no history at %s (%v): name the directory a recorder writes with --history DIR", v, err)
	}
	return v, nil
}

// startRecording records eng's snapshots into dir until ctx is done or
// the returned function is called, which waits for the last write.
// Another process writing the directory is not an error: this one then
// only reads it.
func startRecording(ctx context.Context, eng *engine.Engine, dir string, stderr io.Writer) func() {
	if dir == "" || dir == historyOff {
		return func() {}
	}
	rec, err := history.Open(history.Options{Dir: dir, Logf: func(format string, a ...any) {
		fmt.Fprintf(stderr, "fgtop: "+format+"\n", a...)
	}})
	if err != nil {
		if errors.Is(err, history.ErrLocked) {
			fmt.Fprintf(stderr, "fgtop: %v; not recording, the other one does\n", err)
		} else {
			fmt.Fprintf(stderr, "fgtop: history off: %v\n", err)
		}
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rec.Run(ctx, eng.Subscribe(ctx))
	}()
	return func() {
		cancel()
		<-done
	}
}

type recordFlags struct {
	dir     string
	keep    string
	maxSize string
}

func (f *recordFlags) options() (history.Options, error) {
	o := history.Options{Dir: f.dir}
	if f.dir == "" {
		return o, usageErr("record: --dir DIR is required")
	}
	d, err := history.ParseDays(f.keep)
	if err != nil || d <= 0 {
		return o, usageErr("--keep %s: want a positive duration such as 7d or 36h", f.keep)
	}
	o.Keep = d
	n, err := model.ParseFiniteBinarySize(f.maxSize)
	if err != nil {
		return o, usageErr("--max-size %s: %v", f.maxSize, err)
	}
	size, err := n.Int64()
	if err != nil || size < 1<<20 {
		return o, usageErr("--max-size %s: want at least 1MiB", f.maxSize)
	}
	o.MaxSize = size
	return o, nil
}

func newRecordCmd() *cobra.Command {
	var src sourceFlags
	var rf recordFlags
	cmd := &cobra.Command{
		Use:   "record",
		Short: "Keep the node's history in a directory: who held what, when (for `snapshot --at` and `history`)",
		Long: `Follow the node like the console does and append every change to a history directory:
each kernel's appearance, change and disappearance with its allocations, owner, session, agent,
state and issues; the agents' partitions as applied; a per-minute summary of each device's
utilisation and memory and each kernel's use. Writes are batched once a second into compressed,
checksummed segments (format: docs/history.md); a crash loses at most the last second.

Only one process writes a directory (a lock); serve, exporter and the console record too
(--history DIR) unless another process already does. Oldest segments are dropped first
beyond --keep or --max-size.

Exit status: 0 when stopped by a signal; 2 on bad usage or when the directory is taken.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hopts, err := rf.options()
			if err != nil {
				return err
			}
			opts, err := src.options()
			if err != nil {
				return err
			}
			defer closeSource(opts)
			ctx, stop := notifyStop(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			hopts.Logf = func(format string, a ...any) { fmt.Fprintf(os.Stderr, "fgtop record: "+format+"\n", a...) }
			rec, err := history.Open(hopts)
			if err != nil {
				if errors.Is(err, history.ErrLocked) {
					return &exitError{code: exitBadUsage, err: err}
				}
				return err
			}
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			eng := engine.New(opts)
			errc := make(chan error, 1)
			go func() { errc <- eng.Run(ctx) }()
			fmt.Fprintf(os.Stderr, "fgtop record: recording into %s (keep %s, at most %s); stop with Ctrl-C\n",
				hopts.Dir, rf.keep, rf.maxSize)
			recErr := make(chan error, 1)
			go func() { recErr <- rec.Run(ctx, eng.Subscribe(ctx)) }()
			select {
			case <-ctx.Done():
			case err = <-errc:
			}
			cancel()
			<-recErr
			if err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("engine: %w", err)
			}
			return nil
		},
	}
	src.register(cmd)
	src.registerLive(cmd)
	fl := cmd.Flags()
	fl.StringVar(&rf.dir, "dir", "", "the history directory to write (created if missing)")
	fl.StringVar(&rf.keep, "keep", "7d", "drop what is older than this (7d, 36h)")
	fl.StringVar(&rf.maxSize, "max-size", "100MiB", "drop the oldest segments beyond this size")
	return cmd
}

// snapshotAt prints the snapshot as the record has it at the asked time.
func snapshotAt(at, dirFlag, allocMap string, compact bool, stdout, stderr io.Writer) error {
	dir, err := readHistoryDir(dirFlag)
	if err != nil {
		return err
	}
	t, err := history.ParseWhen(at, time.Now())
	if err != nil {
		return usageErr("--at: %v", err)
	}
	rd, err := history.OpenReader(dir)
	if err != nil {
		return err
	}
	seekGC()
	res, err := rd.At(t)
	var out *history.OutsideError
	switch {
	case errors.As(err, &out):
		return &exitError{code: exitProblem, err: err}
	case errors.Is(err, history.ErrEmpty):
		return &exitError{code: exitProblem, err: fmt.Errorf("%s: %w", dir, err)}
	case err != nil:
		return &exitError{code: exitProblem, err: err}
	}
	if allocMap == report.FormSnapshot {
		// The whole document, most of it the kernels: written as its
		// parts are made, not first copied into one buffer.
		if err := report.WriteSnapshot(stdout, res.Snap, !compact); err != nil {
			return err
		}
	} else {
		b, err := report.Marshal(report.Value(res.Snap, allocMap), !compact)
		if err != nil {
			return err
		}
		if _, err := stdout.Write(b); err != nil {
			return err
		}
	}
	for _, m := range res.Missing {
		fmt.Fprintf(stderr, "fgtop: the record lacks %s\n", m)
	}
	if allocMap == allocRatio {
		reportRatioUnknown(stderr, res.Snap)
	}
	if !res.Exact {
		return &exitError{code: exitProblem, err: fmt.Errorf("%s falls where the record lacks data: this is the node as last recorded, at %s",
			t.Local().Format(time.RFC3339), res.Snap.Time.Local().Format(time.RFC3339))}
	}
	return nil
}

// queryGC trades memory for time in a one-shot query, which builds a
// large state once and exits: the collector runs a quarter as often,
// under a ceiling that keeps a week's query within 768 MiB of heap.
// GOGC and GOMEMLIMIT from the environment win.
func queryGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(768 << 20)
	}
}

// seekHeap is the heap a seek grows to before its first collection:
// `snapshot --at` on the 10,000-kernel week allocates about 170 MiB in
// all, so it never collects, where the collector ran two or three times
// at GOGC 400 for the same peak (about a tenth of its CPU).
const seekHeap = 512 << 20

// seekGC sets the collector up for `snapshot --at`, which builds one
// snapshot and exits: no collection until the heap reaches seekHeap,
// then queryGC's policy from the first collection on, so a record too
// large for that costs what it did before. GOGC or GOMEMLIMIT from the
// environment leave the collector as the user set it.
func seekGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		queryGC()
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(seekHeap)
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(struct{}) { queryGC() }, struct{}{})
}

// historySchema names the JSON layout of `fgtop history --json`.
const historySchema = "fgtop.history/v1"

type historyDoc struct {
	Schema    string        `json:"schema"`
	From      string        `json:"record_from"`
	To        string        `json:"record_to"`
	Intervals []intervalDoc `json:"intervals"`
	Missing   []missingDoc  `json:"missing"`
	// Partitions are the agent.toml journal's records in the span: the
	// partition changes applied (and rolled back) meanwhile.
	Partitions []partitionDoc `json:"partition_changes"`
}

type partitionDoc struct {
	Time    string `json:"time"`
	Action  string `json:"action"`
	Actor   string `json:"actor"`
	Config  string `json:"config"`
	OldHash string `json:"old_hash"`
	NewHash string `json:"new_hash"`
	Result  string `json:"result"`
}

type intervalDoc struct {
	Device  string            `json:"device"`
	Kernel  string            `json:"kernel"`
	Agent   string            `json:"agent"`
	Session string            `json:"session_id,omitempty"`
	User    string            `json:"owner_user_id,omitempty"`
	Project string            `json:"owner_project_id,omitempty"`
	Amounts map[string]string `json:"amounts"`
	From    string            `json:"from"`
	To      string            `json:"to"`
	// Since: already holding when the record (or the record after a gap)
	// began; Open: still holding when it ends; Gone: ended in a gap.
	Since bool `json:"since_before_from,omitempty"`
	Open  bool `json:"open,omitempty"`
	Gone  bool `json:"ended_in_gap,omitempty"`
}

type missingDoc struct {
	From string `json:"from"`
	To   string `json:"to"`
	Why  string `json:"why"`
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func newHistoryCmd() *cobra.Command {
	var dir, device, kernel, user, since, until string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Who held which device, how much, from when to when (from the record of `fgtop record`)",
		Long: `List, from the history directory, who held what: one line per kernel and device with the
same amounts, owner and session, from when to when.

  --device ID    a device: cuda:0, or a bare id for any accelerator with it
  --kernel ID    a kernel id or a unique prefix
  --user ID      an owner user id (recovery.json owner_user_id)
  --since/--until TIME   RFC 3339, 14:02, 2026-11-27 14:02, or -2h

A "<" before FROM: it held the device already when the record (or the record after a gap) began.
TO "open": it still holds it at the end of the record. A "?" after TO: it ended somewhere in a
gap of the record. Gaps and damaged segments are listed after the table.

Exit status: 0; 1 when the record lacks part of the asked span or it lies outside the record;
2 on bad usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n := 0
			for _, v := range []string{device, kernel, user} {
				if v != "" {
					n++
				}
			}
			if n != 1 {
				return usageErr("history: name one of --device ID, --kernel ID, --user ID")
			}
			d, err := readHistoryDir(dir)
			if err != nil {
				return err
			}
			now := time.Now()
			f := history.Filter{Device: device, Kernel: kernel, User: user}
			if since != "" {
				if f.Since, err = history.ParseWhen(since, now); err != nil {
					return usageErr("--since: %v", err)
				}
			}
			if until != "" {
				if f.Until, err = history.ParseWhen(until, now); err != nil {
					return usageErr("--until: %v", err)
				}
			}
			if !f.Since.IsZero() && !f.Until.IsZero() && f.Until.Before(f.Since) {
				return usageErr("--until is before --since")
			}
			rd, err := history.OpenReader(d)
			if err != nil {
				return err
			}
			queryGC()
			res, err := rd.History(f)
			if err != nil {
				return &exitError{code: exitProblem, err: fmt.Errorf("%s: %w", d, err)}
			}
			// Tens of thousands of lines: one write(2) per line was a third
			// of the command's time.
			bw := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
			perr := printHistory(bw, res, res.Partitions, f, asJSON, rd.Active)
			if err := bw.Flush(); err != nil && perr == nil {
				perr = err
			}
			return perr
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dir, "history", "", "the history directory (default "+defaultHistoryDir+")")
	fl.StringVar(&device, "device", "", "a device: cuda:0, or a bare accelerator id")
	fl.StringVar(&kernel, "kernel", "", "a kernel id or a unique prefix")
	fl.StringVar(&user, "user", "", "an owner user id")
	fl.StringVar(&since, "since", "", "from this time (RFC 3339, 14:02, -2h)")
	fl.StringVar(&until, "until", "", "up to this time")
	fl.BoolVar(&asJSON, "json", false, "print JSON (schema "+historySchema+")")
	return cmd
}

func printHistory(w io.Writer, res *history.HistoryResult, parts []agentconfig.JournalRecord, f history.Filter, asJSON, active bool) error {
	var problems []string
	if !f.Until.IsZero() && f.Until.Before(res.From) || !f.Since.IsZero() && f.Since.After(res.To) && !active {
		problems = append(problems, fmt.Sprintf("the asked span is outside the record, which covers %s to %s",
			res.From.Local().Format(time.RFC3339), res.To.Local().Format(time.RFC3339)))
	} else if !f.Since.IsZero() && f.Since.Before(res.From) {
		problems = append(problems, fmt.Sprintf("the record begins at %s, after --since", res.From.Local().Format(time.RFC3339)))
	}
	var missing []history.Missing
	for _, m := range res.Missing {
		if (f.Until.IsZero() || !m.From.After(f.Until)) && (f.Since.IsZero() || !m.To.Before(f.Since)) {
			missing = append(missing, m)
		}
	}
	if asJSON {
		doc := historyDoc{Schema: historySchema, From: rfc(res.From), To: rfc(res.To), Intervals: []intervalDoc{}, Missing: []missingDoc{},
			Partitions: []partitionDoc{}}
		for _, jr := range parts {
			doc.Partitions = append(doc.Partitions, partitionDoc{Time: rfc(jr.Time), Action: jr.Action, Actor: jr.Actor, Config: jr.Config,
				OldHash: jr.OldHash, NewHash: jr.NewHash, Result: jr.Result})
		}
		for _, iv := range res.Intervals {
			am := map[string]string{}
			for s, v := range iv.Amounts {
				am[string(s)] = v.String()
			}
			doc.Intervals = append(doc.Intervals, intervalDoc{Device: iv.Device.String(), Kernel: string(iv.Kernel), Agent: string(iv.Agent),
				Session: iv.Session, User: iv.User, Project: iv.Project, Amounts: am, From: rfc(iv.From), To: rfc(iv.To),
				Since: iv.Since, Open: iv.Open, Gone: iv.Gone})
		}
		for _, m := range missing {
			doc.Missing = append(doc.Missing, missingDoc{From: rfc(m.From), To: rfc(m.To), Why: m.Why})
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	} else {
		if !writeHistoryTable(w, res.Intervals) {
			writeHistoryTabs(w, res.Intervals)
		}
		if len(res.Intervals) == 0 {
			fmt.Fprintln(w, "(nothing held in the asked span)")
		}
		for _, jr := range parts {
			fmt.Fprintf(w, "partition: %s %s by %s (%s): %s\n", jr.Time.Local().Format("2006-01-02 15:04:05"), jr.Action, jr.Actor, jr.Result, jr.Config)
		}
		for _, m := range missing {
			fmt.Fprintf(w, "missing: %s\n", m)
		}
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("the record lacks %d stretch(es) of the asked span (listed above)", len(missing)))
	}
	if len(problems) > 0 {
		return &exitError{code: exitProblem, err: errors.New(strings.Join(problems, "; "))}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// historyHeader is the table's first line's cells.
var historyHeader = [...]string{"FROM", "TO", "DEVICE", "AMOUNT", "KERNEL", "SESSION", "USER", "AGENT"}

// writeHistoryTabs writes the table through a tabwriter.
func writeHistoryTabs(w io.Writer, ivs []history.Interval) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(historyHeader[:], "\t"))
	for _, iv := range ivs {
		var c [len(historyHeader)]string
		historyCells(&c, iv)
		fmt.Fprintln(tw, strings.Join(c[:], "\t"))
	}
	tw.Flush()
}

// historyCells puts an interval's cells in c.
func historyCells(c *[len(historyHeader)]string, iv history.Interval) {
	from := iv.From.Local().Format("2006-01-02 15:04:05")
	if iv.Since {
		from = "<" + from
	}
	to := iv.To.Local().Format("2006-01-02 15:04:05")
	switch {
	case iv.Open:
		to = "open"
	case iv.Gone:
		to += "?"
	}
	var am []string
	for _, s := range iv.Amounts.Names() {
		am = append(am, string(s)+"="+iv.Amounts[s].String())
	}
	*c = [...]string{from, to, iv.Device.String(), strings.Join(am, ","), string(iv.Kernel), dash(iv.Session), dash(iv.User), dash(string(iv.Agent))}
}

// writeHistoryTable writes the table as writeHistoryTabs does (columns as
// wide as their widest cell and two spaces), but measured and padded here
// in buffers, in parts on up to GOMAXPROCS goroutines: a week's tens of
// thousands of lines through fmt and a tabwriter were a sixth of the
// command's time. It writes nothing and returns false when a cell holds a
// byte the tabwriter treats specially.
func writeHistoryTable(w io.Writer, ivs []history.Interval) bool {
	return writeHistoryParts(w, ivs, parallel.Parts(len(ivs), 8192, 4))
}

// writeHistoryParts is writeHistoryTable in parts parts.
func writeHistoryParts(w io.Writer, ivs []history.Interval, parts int) bool {
	tps := make([]tablePart, parts)
	part := func(p int) {
		if p == 0 {
			tps[p].header()
		}
		tps[p].cells(ivs[len(ivs)*p/parts : len(ivs)*(p+1)/parts])
	}
	wait := parallel.Start(parts, part)
	part(0)
	wait()
	var widths [len(historyHeader)]int
	for _, tp := range tps {
		if !tp.ok {
			return false
		}
		for i, v := range tp.widths {
			widths[i] = max(widths[i], v)
		}
	}
	// A column is its widest cell and the padding (2) wide, the last one
	// as its cells are.
	const padding = 2
	for i := range widths {
		widths[i] += padding
	}
	pad := func(p int) { tps[p].pad(&widths) }
	wait = parallel.Start(parts, pad)
	pad(0)
	wait()
	for _, tp := range tps {
		if _, err := w.Write(tp.out); err != nil {
			break
		}
	}
	return true
}

// tablePart is some lines of the history table: their cells one after
// another in arena, ends[i] where cell i ends, each column's widest cell.
type tablePart struct {
	arena  []byte
	ends   []int
	widths [len(historyHeader)]int
	ok     bool
	out    []byte
}

// add ends the cell of column col that arena's end closes.
func (tp *tablePart) add(col int) bool {
	start := 0
	if len(tp.ends) > 0 {
		start = tp.ends[len(tp.ends)-1]
	}
	cell := tp.arena[start:]
	if bytes.ContainsAny(cell, "\t\n\v\f\xff") {
		return false
	}
	tp.widths[col] = max(tp.widths[col], utf8.RuneCount(cell))
	tp.ends = append(tp.ends, len(tp.arena))
	return true
}

func (tp *tablePart) header() {
	for i, h := range historyHeader {
		tp.arena = append(tp.arena, h...)
		tp.add(i)
	}
}

// cells lays out the intervals' cells; ok says none holds a byte the
// tabwriter treats specially.
func (tp *tablePart) cells(ivs []history.Interval) {
	if tp.arena == nil {
		tp.arena = make([]byte, 0, 160*len(ivs))
	}
	tp.ends = slices.Grow(tp.ends, len(historyHeader)*len(ivs))
	for _, iv := range ivs {
		a := tp.arena
		if iv.Since {
			a = append(a, '<')
		}
		tp.arena = iv.From.Local().AppendFormat(a, "2006-01-02 15:04:05")
		ok := tp.add(0)
		switch {
		case iv.Open:
			tp.arena = append(tp.arena, "open"...)
		case iv.Gone:
			tp.arena = iv.To.Local().AppendFormat(tp.arena, "2006-01-02 15:04:05")
			tp.arena = append(tp.arena, '?')
		default:
			tp.arena = iv.To.Local().AppendFormat(tp.arena, "2006-01-02 15:04:05")
		}
		ok = tp.add(1) && ok
		tp.arena = append(tp.arena, iv.Device.Name...)
		tp.arena = append(tp.arena, ':')
		tp.arena = append(tp.arena, iv.Device.ID...)
		ok = tp.add(2) && ok
		for j, s := range iv.Amounts.Names() {
			if j > 0 {
				tp.arena = append(tp.arena, ',')
			}
			tp.arena = append(tp.arena, s...)
			tp.arena = append(tp.arena, '=')
			tp.arena = append(tp.arena, iv.Amounts[s].String()...)
		}
		ok = tp.add(3) && ok
		for j, v := range [...]string{string(iv.Kernel), dash(iv.Session), dash(iv.User), dash(string(iv.Agent))} {
			tp.arena = append(tp.arena, v...)
			ok = tp.add(4+j) && ok
		}
		if !ok {
			return
		}
	}
	tp.ok = true
}

// pad writes the part's lines, each cell but the last padded to its
// column's width.
func (tp *tablePart) pad(widths *[len(historyHeader)]int) {
	const nc = len(historyHeader)
	tp.out = make([]byte, 0, len(tp.arena)+len(tp.ends)/nc*(widths[0]*nc))
	start := 0
	for i, end := range tp.ends {
		col := i % nc
		cell := tp.arena[start:end]
		start = end
		tp.out = append(tp.out, cell...)
		if col == nc-1 {
			tp.out = append(tp.out, '\n')
			continue
		}
		for n := widths[col] - utf8.RuneCount(cell); n > 0; n-- {
			tp.out = append(tp.out, ' ')
		}
	}
}
