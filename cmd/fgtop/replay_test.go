package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/replay"
	"github.com/fgtop/fgtop/model"
	"github.com/spf13/cobra"
)

// recordDemo runs the demo for d with a recorder beside it, as the demo
// command does, and returns the history directory.
func recordDemo(t *testing.T, speed float64, d time.Duration) string {
	dir, _ := recordDemoNode(t, speed, d)
	return dir
}

// recordDemoNode is recordDemo that also returns the demo's directory
// (its agent.toml and mock devices), kept until the test ends.
func recordDemoNode(t *testing.T, speed float64, d time.Duration) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node, err := demo.Start(ctx, demo.Options{Seed: 5, Speed: speed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	eng := engine.New(node.EngineOptions())
	go eng.Run(ctx)
	dir := filepath.Join(t.TempDir(), "history")
	var note bytes.Buffer
	stop := startRecording(ctx, eng, dir, "", true, &note)
	time.Sleep(d)
	time.Sleep(1500 * time.Millisecond) // the last batch
	stop()
	if note.Len() > 0 {
		t.Fatalf("recording said: %s", note.String())
	}
	return dir, node.Dir
}

// TestReplayDemoFidelity: the demo's simulated agents place their kernels
// with the allocators simulate runs; replayed under the partition that was
// in force, its own record refuses nothing that ran, and every session
// lands where it really did.
func TestReplayDemoFidelity(t *testing.T) {
	dir := recordDemo(t, 20, 8*time.Second)
	var out bytes.Buffer
	// One end for both runs below: "now" for each differed by a second
	// when they straddled one, and so did the notes saying the span.
	until := time.Now().UTC().Format(time.RFC3339Nano)
	rf := replayFlags{span: "1h", dir: dir, until: until}
	err := runPlanReplay(context.Background(), &out, io.Discard, &sourceFlags{}, &changeFlags{}, &rf, true)
	var doc replay.Doc
	if jerr := json.Unmarshal(out.Bytes(), &doc); jerr != nil {
		t.Fatalf("%v\n%s", jerr, out.String())
	}
	if err != nil {
		t.Fatalf("exit: %v\n%s", err, out.String())
	}
	if doc.Schema != "fgtop.replay/v1" || doc.Sessions < 5 || doc.Proposal {
		t.Fatalf("doc %+v", doc)
	}
	// The demo now and then counts a stopping kernel's resources as free
	// before its agent releases them (engine/demo: a container hung while
	// stopping), so a session may come in over its agent's amount: the
	// rules refuse it by the manager's count, and the replay must say that
	// the agent's kernels held more than it was given. Nothing else may
	// disagree.
	for _, g := range doc.AsItWas.Disagreements {
		if !strings.Contains(g.Refused, "the manager would not send it there") || len(g.Placed) != 0 || !overheldSaid(doc.Notes, g.Agent) {
			t.Fatalf("as it was: %d refused, disagreement %+v not explained by the agent's kernels over its amount; notes %q", doc.AsItWas.Refused, g, doc.Notes)
		}
		t.Logf("over its amount by the demo's early release: %+v", g)
	}
	if doc.AsItWas.Refused != len(doc.AsItWas.Disagreements) {
		t.Fatalf("as it was: %d refused, %d disagreements", doc.AsItWas.Refused, len(doc.AsItWas.Disagreements))
	}
	if doc.AsItWas.Compared < 3 {
		t.Fatalf("only %d placements compared of %d sessions", doc.AsItWas.Compared, doc.Sessions)
	}
	t.Logf("%d sessions, %d running at the start, %d placements compared", doc.Sessions, doc.Before, doc.AsItWas.Compared)

	// The run fed as the record is read (FGTOP_REPLAY_FED=1) answers the same.
	t.Setenv("FGTOP_REPLAY_FED", "1")
	var fed bytes.Buffer
	if err := runPlanReplay(context.Background(), &fed, io.Discard, &sourceFlags{}, &changeFlags{}, &rf, true); err != nil {
		t.Fatalf("fed: exit %v\n%s", err, fed.String())
	}
	if fed.String() != out.String() {
		t.Fatalf("the fed run's document differs:\n%s\nagainst\n%s", fed.String(), out.String())
	}
}

// overheldSaid reports whether notes say that agent's kernels held more
// than it was given, with the replay's explanation.
func overheldSaid(notes []string, agent model.AgentID) bool {
	for _, n := range notes {
		if strings.Contains(n, string(agent)+"'s kernels asked ") && strings.Contains(n, replay.OverheldWhy) {
			return true
		}
	}
	return false
}

// demoSource is the source flags of the demo's own node: its agent.toml,
// mock devices and virtual host.
func demoSource(nodeDir string) *sourceFlags {
	return &sourceFlags{config: filepath.Join(nodeDir, "agent.toml"), devices: filepath.Join(nodeDir, "mock-accelerator.toml"),
		mockEtcd: filepath.Join(nodeDir, "mock-accelerator.etcd.json"), hostCPUs: "0-31", hostMem: "256g"}
}

// TestPlanReplayProposalAndSuggest: on the demo's record, a proposal that
// gives i-demo-numa0 almost no cuda.shares refuses its sessions in the
// manager's words (exit 1); --suggest finds amounts that serve them all
// within the node, and plans them.
func TestPlanReplayProposalAndSuggest(t *testing.T) {
	dir, nodeDir := recordDemoNode(t, 20, 5*time.Second)
	var out bytes.Buffer
	ch := changeFlags{slots: []string{"i-demo-numa0=cuda.shares=0.1", "i-demo-numa1=cuda.shares=3.9"}}
	err := runPlanReplay(context.Background(), &out, io.Discard, demoSource(nodeDir), &ch, &replayFlags{span: "1h", dir: dir}, true)
	var doc replay.Doc
	if jerr := json.Unmarshal(out.Bytes(), &doc); jerr != nil {
		t.Fatalf("%v: %v\n%s", err, jerr, out.String())
	}
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitProblem || !doc.Proposal || len(doc.Refused) == 0 || doc.ServesAll {
		t.Fatalf("exit %v, proposal %v, %d refused", err, doc.Proposal, len(doc.Refused))
	}
	for _, r := range doc.Refused {
		if r.Agent == "i-demo-numa0" && r.Requested["cuda.shares"].Sign() > 0 && !strings.Contains(r.Reason, "the manager would not send it there: the agent reports") {
			t.Errorf("refusal %+v", r)
		}
		if r.Kernel == "" || r.At.IsZero() || r.Kind == "" {
			t.Errorf("refusal lacks fields: %+v", r)
		}
	}

	out.Reset()
	err = runPlanReplay(context.Background(), &out, io.Discard, demoSource(nodeDir), &changeFlags{}, &replayFlags{span: "1h", dir: dir, suggest: true}, false)
	text := out.String()
	// The demo's own amounts serve its own record: the nearest change is
	// none, unless the demo's early release let an agent's kernels hold
	// more than its amount (see TestReplayDemoFidelity): then the
	// suggestion raises it and must say why.
	want := "suggested: no change: today's amounts already start every recorded session"
	if strings.Contains(text, replay.OverheldWhy) {
		want = "suggested:"
		t.Logf("the demo's early release put an agent over its amount:\n%s", text)
	}
	if err != nil || !strings.Contains(text, want) || !strings.Contains(text, "verdict: all ") {
		t.Fatalf("suggest: %v\n%s", err, text)
	}
}

func TestReplayFlagsUsage(t *testing.T) {
	for _, rf := range []replayFlags{{since: "-2h"}, {suggest: true}, {span: "soon"}, {span: "1d", since: "-1h", until: "-2h"}} {
		_, err := rf.on()
		if err == nil {
			_, _, err = rf.window(time.Now())
		}
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitBadUsage {
			t.Errorf("%+v: %v, want a usage error", rf, err)
		}
	}
	// An empty --replay or --arrivals ("$SPAN" unset in a script) is not
	// their absence: the plan ran without replaying, exit 0.
	for _, args := range [][]string{{"--replay", ""}, {"--replay="}, {"--arrivals", ""}, {"--replay", "", "--slot", "a=cpu=1"}} {
		cmd := &cobra.Command{}
		var rf replayFlags
		var ch changeFlags
		rf.register(cmd)
		ch.register(cmd)
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		_, err := rf.on()
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), `"": want a`) {
			t.Errorf("%q: %v, want a usage error naming the empty value", args, err)
		}
	}
	// A --since after now names what was given.
	rf := replayFlags{span: "1h", since: "2099-01-01T00:00:00Z"}
	if _, _, err := rf.window(time.Now()); err == nil || !strings.Contains(err.Error(), "--since 2099-01-01T00:00:00Z is not before now") {
		t.Errorf("--since in the future: %v", err)
	}
}

// TestReplayWindow: SPAN is counted back from --until (now by default) or
// on from --since, never replaced by it (--replay 10s --since -1m
// replayed the whole last minute: the tour).
func TestReplayWindow(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(h time.Duration) time.Time {
		return time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC).Add(h * time.Hour)
	}
	for _, c := range []struct {
		rf       replayFlags
		from, to time.Time
	}{
		{replayFlags{span: "2h"}, at(10), at(12)},
		{replayFlags{span: "10s", since: "-1m"}, now.Add(-time.Minute), now.Add(-50 * time.Second)},
		{replayFlags{span: "1h", since: "2026-11-27T03:00:00Z"}, at(3), at(4)},
		{replayFlags{span: "36h", since: "2026-11-27T03:00:00Z"}, at(3), now},
		{replayFlags{span: "1h", until: "2026-11-27T03:00:00Z"}, at(2), at(3)},
		{replayFlags{span: "10s", until: "-1m"}, now.Add(-70 * time.Second), now.Add(-time.Minute)},
	} {
		from, to, err := c.rf.window(now)
		if err != nil || !from.Equal(c.from) || !to.Equal(c.to) {
			t.Errorf("%+v: %s to %s (%v), want %s to %s", c.rf, from, to, err, c.from, c.to)
		}
	}
	rf := replayFlags{span: "1h", since: "-3h", until: "-1h"}
	if _, _, err := rf.window(now); err == nil || !strings.Contains(err.Error(), "give one of them") {
		t.Errorf("--since and --until with a span: %v", err)
	}
}

// TestReadHistoryDirUsage: a --history that is missing or a file is bad
// usage (exit 2), said in fgtop's words; a directory is taken.
func TestReadHistoryDirUsage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "none"), "no such directory"},
		{file, "it is a file, not a directory"},
	} {
		_, err := readHistoryDir(c.path)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--history %s: %v, want a usage error saying %q", c.path, err, c.want)
		}
	}
	if got, err := readHistoryDir(dir); err != nil || got != dir {
		t.Errorf("--history %s: %q, %v", dir, got, err)
	}
}

// TestApplyRefusesArrivals: apply --arrivals asked for --suggest, and
// with it was told to drop --suggest: a loop. It is refused as such, with
// or without --suggest, and apply's help does not offer the flag.
func TestApplyRefusesArrivals(t *testing.T) {
	// An empty --arrivals too: told it wants a file, then that apply
	// takes none, was a loop.
	for _, args := range [][]string{{"--arrivals", "sessions.csv", "--slot", "i-a=cpu=1"}, {"--arrivals", "sessions.csv", "--suggest"}, {"--arrivals", "", "--slot", "i-a=cpu=1"}} {
		extra := args
		cmd := newApplyCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"--yes"}, args...))
		err := cmd.Execute()
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), "apply does not take --arrivals: a file's sessions are replayed with plan --arrivals FILE") {
			t.Errorf("apply --arrivals %q: %v, want the usage error that says where --arrivals goes", extra, err)
		}
	}
	var help bytes.Buffer
	cmd := newApplyCmd()
	cmd.SetOut(&help)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil || strings.Contains(help.String(), "--arrivals") {
		t.Errorf("apply --help offers --arrivals (%v):\n%s", err, help.String())
	}
}

// TestApplySuggestReplay: today's file gives i-demo-numa0 too little for
// the sessions it ran; apply --suggest --replay writes the amounts that
// start them all, after the usual confirmation (--yes), and the file
// then serves the record.
func TestApplySuggestReplay(t *testing.T) {
	dir, nodeDir := recordDemoNode(t, 20, 5*time.Second)
	config := filepath.Join(nodeDir, "agent.toml")
	raw, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), `"cuda.shares" = "2.0"`, `"cuda.shares" = "0.2"`, 1)
	text = strings.Replace(text, `"cuda.shares" = "2.0"`, `"cuda.shares" = "3.8"`, 1)
	if text == string(raw) {
		t.Fatal("the demo's agent.toml has no cuda.shares amounts to change")
	}
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	src := demoSource(nodeDir)
	args := []string{"--replay", "1h", "--history", dir, "--suggest", "--config", src.config, "--devices", src.devices,
		"--mock-etcd", src.mockEtcd, "--host-cpus", src.hostCPUs, "--host-mem", src.hostMem}
	cmd := newApplyCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--yes"))
	if err := cmd.Execute(); err != nil {
		t.Fatalf("apply: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "--slot i-demo-numa0=cuda.shares=") || !strings.Contains(out.String(), "verified:") {
		t.Fatalf("apply said:\n%s", out.String())
	}
	var again bytes.Buffer
	err = runPlanReplay(context.Background(), &again, io.Discard, demoSource(nodeDir), &changeFlags{}, &replayFlags{span: "1h", dir: dir, suggest: true}, false)
	if err != nil || !strings.Contains(again.String(), "suggested: no change") {
		t.Fatalf("after the apply: %v\n%s", err, again.String())
	}
}

// TestPlanArrivals: sessions from a file on the demo's node, under its
// agent.toml (i-demo-numa0 given 2.0 cuda.shares): the second of two
// overlapping 1.5s is refused (exit 1); a bad row is refused with its
// line (exit 2).
func TestPlanArrivals(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node, err := demo.Start(ctx, demo.Options{Seed: 5, Speed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	file := filepath.Join(t.TempDir(), "arrivals.csv")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("start,end,agent,slots\n2026-11-23T01:00:00Z,2026-11-23T03:00:00Z,i-demo-numa0,\"cuda.shares=1.5,cpu=2,mem=8g\"\n" +
		"2026-11-23T02:00:00Z,2026-11-23T04:00:00Z,i-demo-numa0,\"cuda.shares=1.5,cpu=2,mem=8g\"\n")
	var out bytes.Buffer
	err = runPlanReplay(ctx, &out, io.Discard, demoSource(node.Dir), &changeFlags{}, &replayFlags{arrivals: file}, true)
	var doc replay.Doc
	if jerr := json.Unmarshal(out.Bytes(), &doc); jerr != nil {
		t.Fatalf("%v: %v\n%s", err, jerr, out.String())
	}
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitProblem || len(doc.Refused) != 1 || doc.Refused[0].Kernel != "line-3" ||
		!strings.Contains(doc.Refused[0].Reason, "the agent reports 0.5 cuda.shares free (given 2.0, its kernels hold 1.5), 1.5 requested") {
		t.Fatalf("exit %v, refused %+v", err, doc.Refused)
	}
	if doc.AsItWas.Refused != 0 || !doc.Arrivals || doc.ServesAll {
		t.Errorf("as it was %+v, arrivals %v, serves all %v: a file's sessions have no record to be checked against", doc.AsItWas, doc.Arrivals, doc.ServesAll)
	}
	// The text says nothing of a record the file is not.
	out.Reset()
	err = runPlanReplay(ctx, &out, io.Discard, demoSource(node.Dir), &changeFlags{}, &replayFlags{arrivals: file}, false)
	text := out.String()
	if !errors.As(err, &ee) || ee.code != exitProblem || !strings.Contains(text, "as it was: sessions from an arrivals file, not a record") ||
		!strings.HasSuffix(text, "verdict: 1 of 2 session(s) would not have started\n") || strings.Contains(text, "record saw") || strings.Contains(text, "stopping container") {
		t.Errorf("exit %v, text:\n%s", err, text)
	}
	// An invalid plan is printed as plan prints it: with --json, its
	// JSON (a script's jq must not meet text), and nothing replayed.
	out.Reset()
	err = runPlanReplay(ctx, &out, io.Discard, demoSource(node.Dir), &changeFlags{slots: []string{"i-demo-numa0=cuda.shares=3.9"}}, &replayFlags{arrivals: file}, true)
	var plan struct {
		Errors []json.RawMessage `json:"errors"`
	}
	if jerr := json.Unmarshal(out.Bytes(), &plan); jerr != nil || len(plan.Errors) == 0 || !errors.As(err, &ee) || ee.code != exitBadUsage {
		t.Fatalf("invalid plan with --json: %v, %v\n%s", err, jerr, out.String())
	}
	write("start,end,agent,slots\n2026-11-23T01:00:00Z,soon,i-demo-numa0,cpu=1\n")
	err = runPlanReplay(ctx, &out, io.Discard, demoSource(node.Dir), &changeFlags{}, &replayFlags{arrivals: file}, false)
	if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), "line 2: end \"soon\"") {
		t.Fatalf("bad row: %v", err)
	}
	// A misspelt slot and an agent the node lacks are refused by line, as
	// typos, not replayed as refusals.
	write("start,end,agent,slots\n2026-11-23T01:00:00Z,,i-demo-numa0,cuda.shrs=0.5\n# a comment\n2026-11-23T01:00:00Z,,i-nope,cpu=1\n2026-11-23T01:00:00Z,,,cpu=1\n")
	err = runPlanReplay(ctx, &out, io.Discard, demoSource(node.Dir), &changeFlags{}, &replayFlags{arrivals: file}, false)
	if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), "line 2: unknown slot \"cuda.shrs\": did you mean cuda.shares?") ||
		!strings.Contains(err.Error(), "line 4: agent \"i-nope\" is not one of this node's (i-demo-numa0, i-demo-numa1)") || strings.Contains(err.Error(), "line 5") {
		t.Fatalf("typos: %v", err)
	}
	// A FIFO, a device or a missing file is refused at once in fgtop's
	// words: a FIFO used to block the open, SIGTERM and all.
	fifo := filepath.Join(t.TempDir(), "arrivals.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:                                  "not a regular file (a FIFO)",
		"/dev/zero":                           "not a regular file (a character device)",
		filepath.Join(t.TempDir(), "missing"): "no such file (looked for ",
	} {
		done := make(chan error, 1)
		go func() {
			done <- runPlanReplay(ctx, io.Discard, io.Discard, demoSource(node.Dir), &changeFlags{}, &replayFlags{arrivals: path}, false)
		}()
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("--arrivals %s: still reading after 10 s", path)
		}
		if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), want) {
			t.Errorf("--arrivals %s: %v, want exit 2 saying %q", path, err, want)
		}
	}
}

// TestReplayNothingToReplay: a history directory with no record yet, and
// a span outside the record, are said as such with exit 2: never exit 1,
// which says some sessions would not have started.
func TestReplayNothingToReplay(t *testing.T) {
	empty := t.TempDir()
	var out bytes.Buffer
	err := runPlanReplay(context.Background(), &out, io.Discard, &sourceFlags{}, &changeFlags{}, &replayFlags{span: "7d", dir: empty}, false)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), "the history directory holds no record yet") {
		t.Errorf("an empty directory: %v", err)
	}
	dir := recordDemo(t, 20, 3*time.Second)
	err = runPlanReplay(context.Background(), &out, io.Discard, &sourceFlags{}, &changeFlags{}, &replayFlags{span: "1h", until: "2026-11-01T00:00:00Z", dir: dir}, false)
	until := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	from, to := until.Add(-time.Hour).Local().Format("2006-01-02 15:04:05"), until.Local().Format("2006-01-02 15:04:05")
	if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), "the span "+from+" ") || !strings.Contains(err.Error(), " to "+to+" ") {
		t.Errorf("a span before the record: %v", err)
	}
	// It says how to ask for the record's own span (the tour: --replay 7d
	// of a record that ended days ago, exit 2 and no way shown).
	if !strings.Contains(err.Error(), "(to replay the span from the record's start: --since ") {
		t.Errorf("a span before the record does not say --since: %v", err)
	}
}

// TestReplayFidelityRefusesABadConfig: with no change flag the replay
// reads no config, but one named with --config that does not load (not
// TOML, not there) is refused as every other plan refuses it, before
// anything is replayed (it was ignored, and the report looked checked
// against it: the tour).
func TestReplayFidelityRefusesABadConfig(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "agent.toml")
	if err := os.WriteFile(broken, []byte("[agent\nbroken"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{broken, filepath.Join(dir, "missing.toml")} {
		var out bytes.Buffer
		err := runPlanReplay(context.Background(), &out, io.Discard, &sourceFlags{config: path}, &changeFlags{}, &replayFlags{span: "7d", dir: dir}, false)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), path) || out.Len() > 0 {
			t.Errorf("%s: %v, wrote %q; want bad usage naming it, nothing replayed", path, err, out.String())
		}
	}
}

// TestHistoryOneQuery: history asks the record one way; two of its
// questions given together are named as such, not answered as if none
// had been (which read as "you gave none").
func TestHistoryOneQuery(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "history: name one of --device NAME"},
		{[]string{"--device", "GPU2", "--user", "229f"}, "history: --device and --user given together: name only one of"},
		{[]string{"--kernel", "k", "--session", "s", "--project", "p"}, "history: --kernel and --session and --project given together"},
	} {
		code, out := runCLI(t, append([]string{"history", "--history", dir}, c.args...)...)
		wantCode(t, code, exitBadUsage, out, c.want)
	}
}

// TestReplayRefusesAnotherNodesConfig: a proposal made from an agent.toml
// none of whose agents the record knows is refused (exit 2), naming both
// sets: the tour replayed the demo's record under another node's file and
// got a verdict for the demo's agents. Without a change flag the record is
// still judged by its own partitions, with a note.
func TestReplayRefusesAnotherNodesConfig(t *testing.T) {
	dir, nodeDir := recordDemoNode(t, 20, 3*time.Second)
	raw, err := os.ReadFile(filepath.Join(nodeDir, "agent.toml"))
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.ReplaceAll(string(raw), "i-demo-numa", "i-other-numa")
	if renamed == string(raw) {
		t.Fatal("the demo's agent.toml names no i-demo-numa agent: the test would prove nothing")
	}
	other := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(other, []byte(renamed), 0o600); err != nil {
		t.Fatal(err)
	}
	src := demoSource(nodeDir)
	src.config = other
	var out bytes.Buffer
	err = runPlanReplay(context.Background(), &out, io.Discard, src, &changeFlags{slots: []string{"i-other-numa0=cuda.shares=1.5"}}, &replayFlags{span: "1h", dir: dir}, false)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), "i-demo-numa0, i-demo-numa1; the config's are i-other-numa0, i-other-numa1: none in common") {
		t.Fatalf("a proposal for agents the record never saw: %v\n%s", err, out.String())
	}
	// With no change flag the record is judged by its own partitions,
	// and the command's stderr (the sanitising writer main gives it,
	// not the process's) says so in fgtop's words.
	var errw bytes.Buffer
	out.Reset()
	runPlanReplay(context.Background(), &out, &errw, src, &changeFlags{}, &replayFlags{span: "1h", dir: dir}, false)
	for _, want := range []string{"fgtop plan: note: with no change flag the replay judges the partitions the record holds; " + other,
		"fgtop plan: note: the record in " + dir + " is of agents i-demo-numa0, i-demo-numa1"} {
		if !strings.Contains(errw.String(), want) {
			t.Errorf("stderr %q, want %q", errw.String(), want)
		}
	}
	// The node's own file: no such refusal.
	out.Reset()
	err = runPlanReplay(context.Background(), &out, io.Discard, demoSource(nodeDir), &changeFlags{slots: []string{"i-demo-numa0=cuda.shares=1.5"}}, &replayFlags{span: "1h", dir: dir}, false)
	if err != nil && strings.Contains(err.Error(), "none in common") {
		t.Fatalf("the node's own agent.toml refused: %v", err)
	}
}

// TestSuggestRefusesAnotherNodesRecord: --suggest from a record none of
// whose agents the config names would cut every amount to what agents it
// never saw used (nothing); it is refused before anything is planned, and
// apply writes nothing.
func TestSuggestRefusesAnotherNodesRecord(t *testing.T) {
	dir, nodeDir := recordDemoNode(t, 20, 3*time.Second)
	raw, err := os.ReadFile(filepath.Join(nodeDir, "agent.toml"))
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "agent.toml")
	renamed := []byte(strings.ReplaceAll(string(raw), "i-demo-numa", "i-other-numa"))
	if err := os.WriteFile(other, renamed, 0o600); err != nil {
		t.Fatal(err)
	}
	src := demoSource(nodeDir)
	src.config = other
	var out bytes.Buffer
	err = runPlanReplay(context.Background(), &out, io.Discard, src, &changeFlags{}, &replayFlags{span: "1h", dir: dir, suggest: true}, false)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), "--suggest: the record in") || !strings.Contains(err.Error(), "none in common") {
		t.Fatalf("--suggest from another node's record: %v\n%s", err, out.String())
	}
	code, text := runCLI(t, "apply", "--config", other, "--devices", src.devices, "--mock-etcd", src.mockEtcd, "--host-cpus", "0-31", "--host-mem", "256g",
		"--replay", "1h", "--history", dir, "--suggest", "--yes")
	wantCode(t, code, exitBadUsage, text, "none in common")
	if now, _ := os.ReadFile(other); !bytes.Equal(now, renamed) {
		t.Fatal("apply --suggest wrote another node's suggestion")
	}
}
