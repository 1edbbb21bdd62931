package agentproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// An agent that started before an apply runs an older partition; once the
// apply is rolled back it runs the file as it is again, and nothing asks
// for a restart. Real writes (Commit, Rollback) and their journal.
func TestRolledBackIsNoRestart(t *testing.T) {
	raw, config, created, f := agentOnConfig(t)
	fd := &Finder{ProcRoot: f.root, RanAtStart: JournalProof(config)}
	op := agentconfig.Actor{Name: "alice", Origin: "cli", Role: agentconfig.RoleOperator}

	applied := created.Add(5 * time.Minute)
	if _, err := agentconfig.Commit(agentconfig.CommitRequest{Path: config, BaseHash: agentconfig.HashOf(raw),
		Data: append(append([]byte{}, raw...), "\n# moved\n"...), Actor: op, Now: func() time.Time { return applied }}); err != nil {
		t.Fatal(err)
	}
	if got := fd.Status(config, applied); got.State != model.RestartPending {
		t.Fatalf("after the apply: %+v, want restart pending", got)
	}

	undone := created.Add(10 * time.Minute)
	if _, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: config, Actor: op, Now: func() time.Time { return undone }}); err != nil {
		t.Fatal(err)
	}
	got := fd.Status(config, undone)
	if got.State != model.RestartCurrent || !strings.Contains(got.Detail, "holds again what it read then") || !strings.Contains(got.Detail, "the apply of") {
		t.Fatalf("after the rollback: %+v, want current, proved by the apply", got)
	}
	// Without the journal's proof, the file's time alone says pending.
	if got := (&Finder{ProcRoot: f.root}).Status(config, undone); got.State != model.RestartPending {
		t.Fatalf("without the proof: %+v, want pending", got)
	}

	// A hand edit since: the bytes are not what the agent read.
	if err := os.WriteFile(config, append(append([]byte{}, raw...), "\n# by hand\n"...), 0o640); err != nil {
		t.Fatal(err)
	}
	if got := fd.Status(config, created.Add(20*time.Minute)); got.State != model.RestartPending {
		t.Fatalf("after a hand edit: %+v, want pending", got)
	}
}

// A copy that keeps its source's older modification time (cp -p, rsync
// -a) over the file an agent read at start is still a change after that
// start: the agent runs the bytes it read, not the copy's.
func TestFileStatusCopyKeepingOldTime(t *testing.T) {
	config := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(config, []byte("# copied in\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := os.Chtimes(config, now.Add(-2*time.Hour), now.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	f := bootedAt(t, now.Add(-3*time.Hour))
	// Started an hour ago, after the copy's kept time, before the copy.
	f.proc(400, now.Add(-time.Hour).Sub(f.boot), "/", "python", "-m", "ai.backend.agent.server", "-f", config)
	got := (&Finder{ProcRoot: f.root}).FileStatus(config)
	if got.State != model.RestartPending {
		t.Fatalf("FileStatus = %+v, want restart pending", got)
	}
	if got.ConfigHash != agentconfig.HashOf([]byte("# copied in\n")) {
		t.Errorf("ConfigHash = %q, want the file's", got.ConfigHash)
	}
}

// An agent process that cannot be inspected (its working directory
// unreadable, its -f relative) may run the file: the journal's proof
// speaks for the processes found, not for it, and no restart is waived.
func TestRanAtStartNotForHiddenAgents(t *testing.T) {
	config := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(config, []byte("# x\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	f := newFakeProc(t)
	f.proc(1, 0, "/")
	f.proc(400, time.Hour, "/", "python", "-m", "ai.backend.agent.server", "-f", config)
	f.proc(401, time.Hour, "", "python", "-m", "ai.backend.agent.server", "-f", "agent.toml")
	proved := func(time.Time) (string, bool) { return "proved", true }
	changed := f.boot.Add(2 * time.Hour)
	if got := (&Finder{ProcRoot: f.root, RanAtStart: proved}).Status(config, changed); got.State != model.RestartPending {
		t.Fatalf("with an agent process hidden: %+v, want restart pending", got)
	}
	// Without it, the proof stands.
	if err := os.RemoveAll(filepath.Join(f.root, "401")); err != nil {
		t.Fatal(err)
	}
	if got := (&Finder{ProcRoot: f.root, RanAtStart: proved}).Status(config, changed); got.State != model.RestartCurrent {
		t.Fatalf("every agent process seen: %+v, want current", got)
	}
}

// A deploy that switches agent.toml's link to another file (ln -sfn)
// after the agent started: the agent runs the file the link named then,
// whatever the new file's own times and journal say of it.
func TestLinkRetargetedAfterStart(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "agentconfig", "testdata", "agent.multi-agent.slot-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	older, newer := filepath.Join(dir, "release-1.toml"), filepath.Join(dir, "release-2.toml")
	if err := os.WriteFile(older, append([]byte("# release 1\n"), raw...), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(newer, raw, 0o640); err != nil {
		t.Fatal(err)
	}
	third := filepath.Join(dir, "release-3.toml")
	if err := os.WriteFile(third, append([]byte("# release 3\n"), raw...), 0o640); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "agent.toml")
	if err := os.Symlink("release-1.toml", config); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(newer)
	if err != nil {
		t.Fatal(err)
	}
	f := bootedAt(t, st.ModTime().Add(-time.Hour))
	start := st.ModTime().Add(500 * time.Millisecond)
	f.proc(400, start.Sub(f.boot), "/", "python", "-m", "ai.backend.agent.server", "-f", config)
	time.Sleep(time.Until(start.Add(100 * time.Millisecond)))

	// release-2 applied and rolled back after the start: its journal
	// proves it held these bytes then, but the agent read release-1.
	op := agentconfig.Actor{Name: "alice", Origin: "cli", Role: agentconfig.RoleOperator}
	if _, err := agentconfig.Commit(agentconfig.CommitRequest{Path: newer, BaseHash: agentconfig.HashOf(raw),
		Data: append(append([]byte{}, raw...), "\n# moved\n"...), Actor: op, Now: func() time.Time { return start.Add(5 * time.Minute) }}); err != nil {
		t.Fatal(err)
	}
	if _, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: newer, Actor: op, Now: func() time.Time { return start.Add(10 * time.Minute) }}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(config); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("release-2.toml", config); err != nil {
		t.Fatal(err)
	}
	if _, ok := JournalProof(config)(start); ok {
		t.Error("JournalProof proved the new link target's bytes were read at start")
	}
	if got := (&Finder{ProcRoot: f.root}).FileStatus(config); got.State != model.RestartPending {
		t.Errorf("FileStatus = %+v, want restart pending", got)
	}
	// A file untouched since before the start, linked after it.
	if err := os.Remove(config); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("release-3.toml", config); err != nil {
		t.Fatal(err)
	}
	if got := (&Finder{ProcRoot: f.root}).FileStatus(config); got.State != model.RestartPending {
		t.Errorf("linked to an older file: FileStatus = %+v, want restart pending", got)
	}
}

// The agent names agent.toml by a link fgtop was not given (fgtop points
// at the release itself): the link switched after the agent started is
// seen on the agent's own path.
func TestAgentsOwnLinkRetargeted(t *testing.T) {
	dir := t.TempDir()
	older, newer := filepath.Join(dir, "release-1.toml"), filepath.Join(dir, "release-2.toml")
	for _, p := range []string{older, newer} {
		if err := os.WriteFile(p, []byte("# "+filepath.Base(p)+"\n"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "agent.toml")
	if err := os.Symlink("release-1.toml", link); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(newer)
	if err != nil {
		t.Fatal(err)
	}
	f := bootedAt(t, st.ModTime().Add(-time.Hour))
	start := st.ModTime().Add(200 * time.Millisecond)
	f.proc(400, start.Sub(f.boot), "/", "python", "-m", "ai.backend.agent.server", "-f", link)
	time.Sleep(time.Until(start.Add(100 * time.Millisecond)))
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("release-2.toml", link); err != nil {
		t.Fatal(err)
	}
	got := (&Finder{ProcRoot: f.root}).FileStatus(newer)
	if got.State != model.RestartPending || !strings.Contains(got.Detail, link) {
		t.Fatalf("FileStatus(%s) = %+v, want restart pending, naming the agent's link", newer, got)
	}
}

// An apply in the agent's first minute, rolled back: the agent may have
// read either version, so a restart stays pending, and its detail says
// why, for the operator who rolled back and is still asked to restart.
func TestRolledBackInFirstMinuteSaysWhy(t *testing.T) {
	raw, config, created, f := agentOnConfig(t)
	fd := &Finder{ProcRoot: f.root, RanAtStart: JournalProof(config)}
	op := agentconfig.Actor{Name: "alice", Origin: "cli", Role: agentconfig.RoleOperator}
	applied := created.Add(30 * time.Second)
	if _, err := agentconfig.Commit(agentconfig.CommitRequest{Path: config, BaseHash: agentconfig.HashOf(raw),
		Data: append(append([]byte{}, raw...), "\n# moved\n"...), Actor: op, Now: func() time.Time { return applied }}); err != nil {
		t.Fatal(err)
	}
	if got := fd.Status(config, applied); got.State != model.RestartPending || strings.Contains(got.Detail, "first minute") {
		t.Fatalf("after the apply: %+v, want pending, with no rollback to explain", got)
	}
	undone := created.Add(5 * time.Minute)
	if _, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: config, Actor: op, Now: func() time.Time { return undone }}); err != nil {
		t.Fatal(err)
	}
	got := fd.Status(config, undone)
	if got.State != model.RestartPending || !strings.Contains(got.Detail, "agent process 400 ") || !strings.Contains(got.Detail, "the apply of") || !strings.Contains(got.Detail, "within the agent's first minute") {
		t.Fatalf("after the rollback: %+v, want pending, saying the apply came in the agent's first minute", got)
	}
}

// agentOnConfig is the fixture's agent.toml written in a temp dir at
// created, and a /proc where agent process 400 started a second after,
// running it: it read that version.
func agentOnConfig(t *testing.T) (raw []byte, config string, created time.Time, f *fakeProc) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "agentconfig", "testdata", "agent.multi-agent.slot-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	config = filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(config, raw, 0o640); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(config)
	if err != nil {
		t.Fatal(err)
	}
	created = st.ModTime()
	f = bootedAt(t, created.Add(-time.Hour))
	f.proc(400, created.Add(time.Second).Sub(f.boot), "/", "python", "-m", "ai.backend.agent.server", "-f", config)
	return raw, config, created, f
}

// bootedAt is a fake /proc of a host booted at boot (to the second), with
// pid 1.
func bootedAt(t *testing.T, boot time.Time) *fakeProc {
	t.Helper()
	f := newFakeProc(t)
	f.boot = boot.Truncate(time.Second)
	f.write("stat", fmt.Sprintf("cpu  1 2 3 4\nbtime %d\n", f.boot.Unix()))
	f.proc(1, 0, "/")
	return f
}

// A write that failed after journaling its intent now leaves a failed
// record, not an intent left "pending". It read the file under the
// journal's lock as any write does, so it proves what the agent read as
// well; but it replaced nothing, and the detail must not say it did (it
// read "the failed of ... replaced that version").
func TestFailedWriteProvesWithoutClaimingAWrite(t *testing.T) {
	raw, config, created, f := agentOnConfig(t)
	fd := &Finder{ProcRoot: f.root, RanAtStart: JournalProof(config)}
	op := agentconfig.Actor{Name: "alice", Origin: "cli", Role: agentconfig.RoleOperator}
	moved := append(append([]byte{}, raw...), "\n# moved\n"...)

	failed := created.Add(5 * time.Minute)
	_, err := agentconfig.Commit(agentconfig.CommitRequest{Path: config, BaseHash: agentconfig.HashOf(raw), Data: moved, Actor: op,
		Now: func() time.Time { return failed }, Hooks: &agentconfig.Hooks{Fault: func(s agentconfig.Step) error {
			if s == agentconfig.StepIntent {
				// The temp file taken away: the rename fails.
				tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(config), ".agent.toml.fgtop-tmp-*"))
				for _, p := range tmps {
					os.Remove(p)
				}
			}
			return nil
		}}})
	if err == nil || !strings.Contains(err.Error(), "the journal records the apply as failed") {
		t.Fatalf("the failing apply: %v", err)
	}
	applied := created.Add(7 * time.Minute)
	if _, err := agentconfig.Commit(agentconfig.CommitRequest{Path: config, BaseHash: agentconfig.HashOf(raw), Data: moved, Actor: op,
		Now: func() time.Time { return applied }}); err != nil {
		t.Fatal(err)
	}
	undone := created.Add(10 * time.Minute)
	if _, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: config, Actor: op, Now: func() time.Time { return undone }}); err != nil {
		t.Fatal(err)
	}
	got := fd.Status(config, undone)
	if got.State != model.RestartCurrent || !strings.Contains(got.Detail, "the failed apply of") || !strings.Contains(got.Detail, "wrote nothing") ||
		strings.Contains(got.Detail, "replaced") {
		t.Fatalf("after a failed apply, an apply and its rollback: %+v, want current, proved by the failed apply without claiming it wrote", got)
	}
}
