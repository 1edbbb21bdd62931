// Package agentproc finds the Backend.AI agent processes that run an
// agent.toml, in /proc, and tells whether they started before the file last
// changed: the agent reads its config only at start, so such a process runs
// an older partition than the file says ("restart pending").
//
// A process is an agent process when its command line runs Backend.AI's
// agent (the ai.backend.agent module, or `backend.ai ag start-server`).
// It runs the file when its config argument (-f/--config) resolves, from
// its working directory, to the file; without one, when the file is where
// the agent's own search finds one (./agent.toml in its working directory,
// or one of the usual places). The root of /proc is a parameter so tests
// use a fake tree.
package agentproc

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/procmap"
	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/model"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's start time.
const clockTicks = procmap.ClockTicks

// Process is one agent process found for a config file.
type Process struct {
	PID   int
	Start time.Time
	Args  []string
	// Config is the file's path as the process names it (its -f from its
	// working directory, or where its search found it): its links may not
	// be those of the path fgtop was given.
	Config string
}

// Finder looks for agent processes under a /proc tree.
type Finder struct {
	// ProcRoot is the proc file system's mount point ("/proc" when empty).
	ProcRoot string
	// SearchPaths are where an agent started without -f looks for
	// agent.toml, besides its working directory.
	SearchPaths []string
	// RanAtStart, when set, tells whether the file held at start what it
	// holds now, and why (JournalProof): a process that started before
	// the file last changed then runs it as it is, not an older partition.
	// Where it does not, why is empty or says why it cannot be proved.
	RanAtStart func(start time.Time) (why string, ok bool)
}

func (f *Finder) root() string {
	if f.ProcRoot == "" {
		return "/proc"
	}
	return f.ProcRoot
}

// Find returns the agent processes that run config (an absolute path), by
// start time. It fails only when /proc itself cannot be read; processes
// that vanish or cannot be inspected while it looks are skipped, and
// hidden reports how many agent processes could not be inspected.
func (f *Finder) Find(config string) (procs []Process, hidden int, err error) {
	root := f.root()
	boot, err := bootTime(root)
	if err != nil {
		return nil, 0, err
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", root, err)
	}
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 || pid == self {
			continue
		}
		dir := filepath.Join(root, e.Name())
		raw, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if !isAgent(args) && !(slices.Contains(args, config) && mentionsBackendAI(args, config)) {
			// An editor or a pager with agent.toml open is no agent.
			continue
		}
		runs, named, ok := f.runs(dir, args, config)
		if !ok {
			hidden++
			continue
		}
		if !runs {
			continue
		}
		start, err := startTime(dir, boot)
		if err != nil {
			hidden++
			continue
		}
		procs = append(procs, Process{PID: pid, Start: start, Args: args, Config: named})
	}
	slices.SortFunc(procs, func(a, b Process) int { return a.Start.Compare(b.Start) })
	return procs, hidden, nil
}

// isAgent reports whether a command line runs Backend.AI's agent server.
func isAgent(args []string) bool {
	for i, a := range args {
		if strings.Contains(a, "ai.backend.agent") {
			return true
		}
		if (a == "ag" || a == "agent") && i+1 < len(args) && args[i+1] == "start-server" {
			return true
		}
	}
	return false
}

// mentionsBackendAI reports whether a command line names Backend.AI at all
// (a wrapper script, a pex or a pants target of the agent). fgtop itself,
// pointed at the file, is no agent.
func mentionsBackendAI(args []string, config string) bool {
	if len(args) > 0 && strings.HasPrefix(filepath.Base(args[0]), "fgtop") {
		return false
	}
	for _, a := range args {
		if a == config {
			continue // /etc/backend.ai/agent.toml names Backend.AI, not the program
		}
		l := strings.ToLower(a)
		if strings.Contains(l, "backend.ai") || strings.Contains(l, "ai.backend") {
			return true
		}
	}
	return false
}

// configArg returns the -f/--config argument, if any.
func configArg(args []string) (string, bool) {
	for i, a := range args {
		switch {
		case a == "-f" || a == "--config":
			if i+1 < len(args) {
				return args[i+1], true
			}
		case strings.HasPrefix(a, "--config="):
			return a[len("--config="):], true
		case strings.HasPrefix(a, "-f") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			return a[2:], true
		}
	}
	return "", false
}

// runs reports whether the process runs config, and named, the path it
// names it by; ok is false when it cannot be told (its working directory
// is unreadable and the path is relative).
func (f *Finder) runs(dir string, args []string, config string) (runs bool, named string, ok bool) {
	arg, has := configArg(args)
	if has && filepath.IsAbs(arg) {
		p := filepath.Clean(arg)
		return same(p, config), p, true
	}
	cwd, err := os.Readlink(filepath.Join(dir, "cwd"))
	if err != nil {
		if has || slices.Contains(args, config) {
			return slices.Contains(args, config), config, !has
		}
		return false, "", false
	}
	if has {
		p := filepath.Join(cwd, arg)
		return same(p, config), p, true
	}
	if slices.Contains(args, config) {
		return true, config, true
	}
	// No -f: the agent takes the first agent.toml its search finds.
	for _, p := range append([]string{filepath.Join(cwd, "agent.toml")}, f.SearchPaths...) {
		if _, err := os.Stat(p); err == nil {
			return same(p, config), p, true
		}
	}
	return false, "", true
}

// same compares two paths, through symlinks where both exist.
func same(a, b string) bool {
	if a == b {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// bootTime is when the system booted: now less <root>/uptime (to 10 ms),
// or btime of <root>/stat (whole seconds: a process started just after a
// file was written could seem to have started before it).
func bootTime(root string) (time.Time, error) {
	if raw, err := os.ReadFile(filepath.Join(root, "uptime")); err == nil {
		if f := strings.Fields(string(raw)); len(f) > 0 {
			if up, err := strconv.ParseFloat(f[0], 64); err == nil && up > 0 {
				return time.Now().Add(-time.Duration(up * float64(time.Second))), nil
			}
		}
	}
	f, err := os.Open(filepath.Join(root, "stat"))
	if err != nil {
		return time.Time{}, fmt.Errorf("read boot time: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("read boot time: btime %q: %w", rest, err)
			}
			return time.Unix(n, 0), nil
		}
	}
	return time.Time{}, fmt.Errorf("read boot time: no btime line in %s", filepath.Join(root, "stat"))
}

// startTime reads a process's start time from its stat file.
func startTime(dir string, boot time.Time) (time.Time, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return time.Time{}, err
	}
	ticks, err := startTicks(raw)
	if err != nil {
		return time.Time{}, err
	}
	return boot.Add(time.Duration(ticks) * (time.Second / clockTicks)), nil
}

// startTicks parses field 22 of /proc/<pid>/stat (clock ticks after boot)
// with procmap.ParseStat, which GPU process mapping shares.
func startTicks(raw []byte) (uint64, error) {
	st, err := procmap.ParseStat(raw)
	return st.StartTicks, err
}

// Status tells whether the agents of config run the file as it is now:
// changed is when the file last changed (FileStatus: agentconfig.ChangedAt
// and the links on its path). A
// process that started before it still runs the file as it is when
// RanAtStart proves it held the same bytes then.
func (f *Finder) Status(config string, changed time.Time) model.Restart {
	procs, hidden, err := f.Find(config)
	if err != nil {
		return model.Restart{State: model.RestartUnknown, Detail: "cannot tell whether the agent runs this agent.toml: " + err.Error()}
	}
	if len(procs) == 0 {
		if hidden > 0 {
			return model.Restart{State: model.RestartUnknown,
				Detail: fmt.Sprintf("cannot tell: %d agent process(es) in %s could not be inspected", hidden, f.root())}
		}
		if !f.seesOthers() {
			return model.Restart{State: model.RestartUnknown,
				Detail: fmt.Sprintf("cannot tell: other users' processes are hidden in %s (hidepid?)", f.root())}
		}
		return model.Restart{State: model.RestartNotRunning, Detail: "no Backend.AI agent process running " + config + " was found"}
	}
	r := model.Restart{State: model.RestartCurrent}
	for _, p := range procs {
		r.PIDs = append(r.PIDs, p.PID)
	}
	for _, p := range procs {
		// The process's own path to the file: a link on it retargeted
		// since it started, and it read another file than this one.
		if l, ok := linksChanged(p.Config); ok && l.After(p.Start) {
			r.State = model.RestartPending
			r.Detail = fmt.Sprintf("agent process %d started %s, before a link on its path to agent.toml, %s, changed (%s): it runs the file the link named then; restart it to apply the file",
				p.PID, p.Start.Format(time.DateTime), p.Config, l.Format(time.DateTime))
			return r
		}
	}
	first := procs[0]
	// An agent process that could not be inspected may run the file and
	// have started before any write: the proof is of every agent or none.
	// The process named when a restart is pending is one the journal
	// cannot clear: naming an older one that it does clear would send the
	// operator to restart the wrong process.
	stale, whyNot := first, ""
	if first.Start.Before(changed) && f.RanAtStart != nil && hidden == 0 {
		why, p, ok := f.allRanAtStart(procs, changed)
		whyNot = why
		if ok {
			r.Detail = fmt.Sprintf("agent process %d started %s, before agent.toml changed (%s), but the file holds again what it read then: %s",
				first.PID, first.Start.Format(time.DateTime), changed.Format(time.DateTime), why)
			// Every process cleared is named: with two agents, one named
			// alone leaves the operator asking about the other.
			for _, p := range procs[1:] {
				if p.Start.Before(changed) {
					r.Detail += fmt.Sprintf("; so does agent process %d, started %s", p.PID, p.Start.Format(time.DateTime))
				}
			}
			return r
		}
		stale = p
	}
	if first.Start.Before(changed) {
		r.State = model.RestartPending
		r.Detail = fmt.Sprintf("agent process %d started %s, before agent.toml changed (%s): it runs the partition it read then; restart it to apply the file",
			stale.PID, stale.Start.Format(time.DateTime), changed.Format(time.DateTime))
		if whyNot != "" {
			r.Detail += " (" + whyNot + ")"
		}
	} else {
		r.Detail = fmt.Sprintf("agent process %d started %s, after agent.toml last changed (%s)",
			first.PID, first.Start.Format(time.DateTime), changed.Format(time.DateTime))
	}
	return r
}

// allRanAtStart asks RanAtStart of every process started before the file
// changed; why is the first one's answer, and where one is not proved,
// stale is that process and why what RanAtStart said of it.
func (f *Finder) allRanAtStart(procs []Process, changed time.Time) (why string, stale Process, ok bool) {
	for i, p := range procs {
		if !p.Start.Before(changed) {
			continue
		}
		w, ok := f.RanAtStart(p.Start)
		if !ok {
			return w, p, false
		}
		if i == 0 {
			why = w
		}
	}
	return why, Process{}, true
}

// seesOthers reports whether this process can see processes of other
// users: pid 1 is always there unless /proc hides them.
func (f *Finder) seesOthers() bool {
	_, err := os.Stat(filepath.Join(f.root(), "1", "stat"))
	return err == nil
}

// FileStatus is Status for the config file at config, found by an
// absolute path: when it last changed (agentconfig.ChangedAt: a copy that
// kept an older modification time changed it all the same) and, for a
// process started before that, the proof of its journal (JournalProof).
func (f *Finder) FileStatus(config string) model.Restart {
	path := filepath.Clean(config)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	fi, err := os.Stat(path)
	if err != nil {
		return model.Restart{State: model.RestartUnknown, Detail: "cannot tell: " + err.Error()}
	}
	g := *f
	if g.RanAtStart == nil {
		g.RanAtStart = JournalProof(path)
	}
	changed := agentconfig.ChangedAt(fi)
	if l, ok := linksChanged(path); ok && l.After(changed) {
		changed = l
	}
	r := g.Status(path, changed)
	// Read after the judgement: a write in between makes the hash the
	// newer version's, which the console then does not take for judged
	// as current (a state of the older one is never read as the newer's).
	if data, err := safefile.ReadFile(path, agentconfig.MaxConfigSize); err == nil {
		if fi2, err := os.Stat(path); err == nil && os.SameFile(fi, fi2) && agentconfig.ChangedAt(fi2).Equal(changed) && fi2.Size() == int64(len(data)) {
			r.ConfigHash = agentconfig.HashOf(data)
		}
	}
	return r
}

// maxProofJournal is the largest journal JournalProof reads: some ten
// thousand writes, each with its plan.
const maxProofJournal = 32 << 20

// JournalProof is a Finder's RanAtStart for the config file at path (its
// symlinks resolved, as fgtop's writes resolve them): the file's bytes now
// and its journal, read at each ask, with agentconfig.RanAtStart's proof.
// Where either cannot be read it proves nothing. Where the file holds
// again the version fgtop's first write since start replaced but the proof
// fails, its why says why.
func JournalProof(path string) func(start time.Time) (string, bool) {
	return func(start time.Time) (string, bool) {
		real, err := agentconfig.ResolvePath(path)
		if err != nil {
			return "", false
		}
		// A link retargeted since the start: the agent read another
		// file, which this file's journal says nothing of.
		if l, ok := linksChanged(path); !ok || l.After(start) {
			return "", false
		}
		data, err := safefile.ReadFile(real, agentconfig.MaxConfigSize)
		if err != nil {
			return "", false
		}
		// Asked every poll while a restart is pending: a journal past any
		// a node's writes make is not read whole each time, and proves
		// nothing.
		journal := agentconfig.JournalPath(real)
		if st, err := os.Stat(journal); err != nil || st.Size() > maxProofJournal {
			return "", false
		}
		recs, _, err := agentconfig.ReadJournal(journal)
		if err != nil {
			return "", false
		}
		w, whyNot, ok := agentconfig.RanAtStartWhy(recs, start, agentconfig.HashOf(data), agentconfig.BootID())
		action := w.Action
		if action == agentconfig.ActionIntent {
			action = "interrupted " + w.Intends
		}
		if w.Action == agentconfig.ActionFailed {
			// It read the file under the journal's lock as the others do,
			// so it proves as much, but it replaced nothing.
			if !ok {
				if whyNot == "" {
					return "", false
				}
				return fmt.Sprintf("the file holds the version the failed %s of %s left in place, but %s: whether the agent runs it cannot be proved",
					w.Intends, w.Time.Local().Format(time.DateTime), whyNot), false
			}
			return fmt.Sprintf("the failed %s of %s found that version (sha256 %s, unchanged since %s), wrote nothing, and the file holds it now",
				w.Intends, w.Time.Local().Format(time.DateTime), shortHash(w.OldHash), w.OldChanged.Local().Format(time.DateTime)), true
		}
		if !ok {
			if whyNot == "" {
				return "", false
			}
			return fmt.Sprintf("the file holds again the version the %s of %s replaced, but %s: whether the agent runs it cannot be proved",
				action, w.Time.Local().Format(time.DateTime), whyNot), false
		}
		return fmt.Sprintf("the %s of %s replaced that version (sha256 %s, unchanged since %s), and it is back",
			action, w.Time.Local().Format(time.DateTime), shortHash(w.OldHash), w.OldChanged.Local().Format(time.DateTime)), true
	}
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// maxLinks bounds the symlinks linksChanged follows (a loop ends there).
const maxLinks = 40

// linksChanged is the latest change of the symlinks met resolving path
// (zero where there are none; ok false where it cannot be said): a
// link retargeted (ln -sfn, a deploy switching releases) changes the
// file read through it, while the file's own times are its own.
func linksChanged(path string) (latest time.Time, ok bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return time.Time{}, false
	}
	rest := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	cur := "/"
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		st, err := os.Lstat(next)
		if err != nil {
			return time.Time{}, false
		}
		if st.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxLinks {
			return time.Time{}, false
		}
		if t := agentconfig.ChangedAt(st); t.After(latest) {
			latest = t
		}
		target, err := os.Readlink(next)
		if err != nil {
			return time.Time{}, false
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(strings.TrimPrefix(target, "/"), "/"), rest...)
	}
	return latest, true
}
