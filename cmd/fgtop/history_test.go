package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// fgtopChild runs the real command line (this test binary as fgtop).
func fgtopChild(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestDemoHelperProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "FGTOP_DEMO_HELPER=1", "FGTOP_HISTORY=off")
	return cmd
}

// runChild runs fgtop with args and returns stdout, stderr and the exit code.
func runChild(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := fgtopChild(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// comparable drops what two engines following the same tree need not
// agree on: their own sequence numbers and times, and the telemetry the
// record keeps per minute.
func comparableDoc(t *testing.T, b []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	delete(m, "seq")
	delete(m, "time")
	delete(m, "idle_kernels")
	for _, d := range m["devices"].([]any) {
		delete(d.(map[string]any), "telemetry")
	}
	for _, k := range m["kernels"].([]any) {
		delete(k.(map[string]any), "use")
	}
	out, _ := json.Marshal(m)
	return string(out)
}

type liveLine struct {
	at  time.Time
	doc string
}

// The hidden check's shape: record a churning tree with the real binary,
// SIGKILL the recorder mid-write (three times), restart it each time, and
// compare `snapshot --at` at a dozen moments with what a live follower
// printed at those moments.
func TestRecordKilledThenSnapshotAtMatchesLive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for about 20 s")
	}
	fx := enginetest.Fixtures(t)
	root, hist := t.TempDir(), t.TempDir()
	files := enginetest.NewFiles(t)
	devs := []model.DeviceID{"0", "1", "2", "3"}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 12; i++ {
		id := enginetest.KernelID(i)
		enginetest.MustWriteKernel(t, root, id, files.Random(root, id, devs, rng))
	}
	src := []string{"--scratch-root", "i-rec=" + root, "--devices", filepath.Join(fx, "mock-accelerator.toml"),
		"--mock-etcd", filepath.Join(fx, "mock-accelerator.etcd.json")}

	follow := fgtopChild(append([]string{"snapshot", "--follow", "--json", "--compact"}, src...)...)
	stdout, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan liveLine, 1000)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var head struct{ Time time.Time }
			json.Unmarshal(sc.Bytes(), &head)
			lines <- liveLine{at: head.Time, doc: comparableDoc(t, sc.Bytes())}
		}
		close(lines)
	}()
	defer func() { follow.Process.Kill(); follow.Wait() }()

	record := func() *exec.Cmd {
		cmd := fgtopChild(append([]string{"record", "--dir", hist}, src...)...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	rec := record()
	time.Sleep(1500 * time.Millisecond)
	type window struct{ from, to time.Time }
	var blind []window // around each kill: the record may lack it
	next := 12
	for step := 0; step < 48; step++ {
		id := enginetest.KernelID(rng.IntN(next))
		switch rng.IntN(3) {
		case 0:
			id = enginetest.KernelID(next)
			next++
			enginetest.MustWriteKernel(t, root, id, files.Random(root, id, devs, rng))
		case 1:
			os.RemoveAll(filepath.Join(root, id))
		default:
			if _, err := os.Stat(filepath.Join(root, id)); err == nil {
				enginetest.MustWriteKernel(t, root, id, files.Random(root, id, devs, rng))
			}
		}
		if step%12 == 11 {
			// Mid-write: the change above is in the recorder's batch.
			time.Sleep(time.Duration(100+rng.IntN(700)) * time.Millisecond)
			killed := time.Now()
			rec.Process.Signal(syscall.SIGKILL)
			rec.Wait()
			before := countSegments(t, hist)
			rec = record()
			// Until the restarted recorder's first segment is there, the
			// record lacks the node.
			deadline := time.Now().Add(30 * time.Second)
			for countSegments(t, hist) == before {
				if time.Now().After(deadline) {
					t.Fatal("the restarted recorder wrote no segment in 30 s")
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Logf("restarted recorder writing %s after the kill", time.Since(killed).Round(time.Millisecond))
			blind = append(blind, window{killed.Add(-1500 * time.Millisecond), time.Now().Add(500 * time.Millisecond)})
			time.Sleep(700 * time.Millisecond)
			continue
		}
		time.Sleep(600 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond)
	rec.Process.Signal(syscall.SIGTERM)
	if err := rec.Wait(); err != nil {
		t.Fatalf("recorder stopped with %v", err)
	}
	follow.Process.Kill()
	var seen []liveLine
	for l := range lines {
		seen = append(seen, l)
	}
	if len(seen) < 30 {
		t.Fatalf("the follower printed %d lines", len(seen))
	}
	// Moments in the middle of quiet stretches, away from the kills: the
	// recorder's engine sees each write at its own moment, which on a
	// loaded machine may lag the follower's by a good part of a second.
	var moments []liveLine
	for i := 0; i+1 < len(seen); i++ {
		quiet := seen[i+1].at.Sub(seen[i].at)
		if quiet < 450*time.Millisecond {
			continue
		}
		at := seen[i].at.Add(quiet / 2)
		ok := true
		for _, w := range blind {
			if at.After(w.from) && at.Before(w.to) {
				ok = false
			}
		}
		if ok {
			moments = append(moments, liveLine{at: at, doc: seen[i].doc})
		}
	}
	if len(moments) < 12 {
		t.Fatalf("only %d quiet moments", len(moments))
	}
	step := len(moments) / 12
	for n := 0; n < 12; n++ {
		m := moments[n*step]
		out, errOut, code := runChild(t, "snapshot", "--at", m.at.Format(time.RFC3339Nano), "--history", hist, "--compact")
		if code != 0 {
			t.Fatalf("--at %s: exit %d: %s", m.at, code, errOut)
		}
		if got := comparableDoc(t, []byte(out)); got != m.doc {
			t.Fatalf("--at %s differs from what was live: %s", m.at, docDiff(m.doc, got))
		}
	}
	// The record knows the kills' gaps, and a moment in one is answered
	// with the node as last recorded and exit 1.
	out, errOut, code := runChild(t, "history", "--device", "cuda:1", "--json", "--history", hist)
	var hdoc struct {
		Intervals []map[string]any
		Missing   []struct{ From, To time.Time }
	}
	if err := json.Unmarshal([]byte(out), &hdoc); err != nil {
		t.Fatalf("history --json: %v: %s %s", err, out, errOut)
	}
	if code != 1 || len(hdoc.Missing) != len(blind) || len(hdoc.Intervals) == 0 {
		t.Fatalf("history: exit %d, %d intervals, missing %v after %d kills (%s)", code, len(hdoc.Intervals), hdoc.Missing, len(blind), errOut)
	}
	gap := hdoc.Missing[0]
	mid := gap.From.Add(gap.To.Sub(gap.From) / 2)
	_, errOut, code = runChild(t, "snapshot", "--at", mid.Format(time.RFC3339Nano), "--history", hist)
	if code != 1 || !strings.Contains(errOut, "lacks") {
		t.Fatalf("a moment in a kill's gap: exit %d, %s", code, errOut)
	}
	// Outside the record.
	_, errOut, code = runChild(t, "snapshot", "--at", "-2h", "--history", hist)
	if code != 1 || !strings.Contains(errOut, "before the record begins") {
		t.Fatalf("a moment before the record: exit %d, %s", code, errOut)
	}
}

func countSegments(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "seg-*.fgh"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// docDiff names the first top-level field two documents differ in, and
// where in it.
func docDiff(a, b string) string {
	var x, y map[string]json.RawMessage
	json.Unmarshal([]byte(a), &x)
	json.Unmarshal([]byte(b), &y)
	for k, v := range x {
		w := y[k]
		if string(v) == string(w) {
			continue
		}
		i := 0
		for i < len(v) && i < len(w) && v[i] == w[i] {
			i++
		}
		lo := max(i-200, 0)
		return fmt.Sprintf("%s at %d:\nlive:   ...%.300s\nrecord: ...%.300s", k, i, v[lo:], w[lo:])
	}
	return "fields differ in number"
}

// The demo records beside its node: after it ran a while, the record
// answers with what the engine showed live (kernels and allocations;
// telemetry is kept per minute).
func TestDemoRecordsItsHistory(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node, err := demo.Start(ctx, demo.Options{Seed: 3, Speed: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	eng := engine.New(node.EngineOptions())
	errc := make(chan error, 1)
	go func() { errc <- eng.Run(ctx) }()
	dir := filepath.Join(node.Dir, "history")
	var note bytes.Buffer
	stop := startRecording(ctx, eng, dir, "", true, &note)
	live := eng.Subscribe(ctx)
	var seen []*model.Snapshot
	deadline := time.After(4 * time.Second)
loop:
	for {
		select {
		case s := <-live:
			seen = append(seen, s)
		case <-deadline:
			break loop
		}
	}
	time.Sleep(1500 * time.Millisecond) // the last batch
	stop()
	if note.Len() > 0 {
		t.Fatalf("recording said: %s", note.String())
	}
	rd, err := history.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, s := range seen[len(seen)/2:] {
		res, err := rd.At(s.Time)
		if err != nil {
			t.Fatal(err)
		}
		if res.Snap.Seq != s.Seq {
			continue // a snapshot the recorder skipped (latest wins)
		}
		want, got := kernelsOf(s), kernelsOf(res.Snap)
		if want != got {
			t.Fatalf("seq %d: live %s\nrecord %s", s.Seq, want, got)
		}
		matched++
	}
	if matched < 3 || len(seen) < 10 {
		t.Fatalf("%d snapshots seen, %d compared", len(seen), matched)
	}
}

func kernelsOf(s *model.Snapshot) string {
	var b strings.Builder
	for _, k := range s.Kernels() {
		fmt.Fprintf(&b, "%s %s %s %s;", k.ID, k.Agent, k.State, enginetest.FmtAlloc(k.Alloc))
	}
	return b.String()
}
