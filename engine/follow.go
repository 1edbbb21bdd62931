package engine

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/agentproc"
	"github.com/fgtop/fgtop/model"
	"github.com/fsnotify/fsnotify"
)

// configRead is one re-read of the agent.toml: a view, or why not.
type configRead struct {
	view *ConfigView
	err  error
}

func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// followConfig watches the agent.toml's directory (and, when the path is a
// symlink, its target's) and sends a new reading after each change has
// been quiet for ConfigDebounce. Directories, not the file: editors and
// fgtop's own apply replace the file by rename, which ends a watch on the
// file itself. kick is signalled after every reading, for the restart
// check.
func (e *Engine) followConfig(ctx context.Context, out chan configRead, kick chan<- struct{}) {
	path := filepath.Clean(e.opts.ConfigPath)
	read := func() {
		v, err := LoadConfigView(path)
		sendLatest(ctx, out, configRead{view: v, err: err})
		if kick != nil {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
	}
	w, err := newConfigWatcher()
	if err != nil {
		// No inotify instance left (fs.inotify.max_user_instances, shared
		// with every other watcher of this user): the file is polled, so
		// the partition shown still follows it, just less promptly. It is
		// not an error of the file itself.
		e.pollConfig(ctx, path, read)
		return
	}
	defer w.Close()
	names := map[string]bool{path: true}
	dirs := []string{filepath.Dir(path)}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		names[real] = true
		if d := filepath.Dir(real); d != dirs[0] {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil {
			// Out of inotify watches, or the directory went away: poll.
			e.pollConfig(ctx, path, read)
			return
		}
	}
	// The file may have changed between the caller's read and the watch.
	read()
	debounce := stoppedTimer()
	defer debounce.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if names[filepath.Clean(ev.Name)] {
				debounce.Reset(e.opts.ConfigDebounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			// An overflow may have eaten the event: read again to be sure.
			_ = err
			debounce.Reset(e.opts.ConfigDebounce)
		case <-debounce.C:
			read()
		}
	}
}

// newConfigWatcher is fsnotify.NewWatcher; tests replace it to take the
// polling path.
var newConfigWatcher = fsnotify.NewWatcher

// configPoll is how often agent.toml is looked at when it cannot be
// watched: well inside the 1 s in which a change must reach the consoles.
const configPoll = 400 * time.Millisecond

// pollConfig follows agent.toml without inotify: it reads the file again
// whenever what lstat and stat say about it (the link, and the file it
// leads to: identity, size, time) changes.
func (e *Engine) pollConfig(ctx context.Context, path string, read func()) {
	type look struct {
		l, f os.FileInfo
	}
	same := func(a, b os.FileInfo) bool {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && a.Mode() == b.Mode()
	}
	get := func() look {
		var lk look
		lk.l, _ = os.Lstat(path)
		lk.f, _ = os.Stat(path)
		return lk
	}
	last := get()
	read()
	tick := time.NewTicker(configPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			now := get()
			if !same(now.l, last.l) || !same(now.f, last.f) {
				last = now
				read()
			}
		}
	}
}

// restartStatus looks for the agent processes of the config once.
func (e *Engine) restartStatus() model.Restart {
	search := e.opts.ProcSearchPaths
	if search == nil {
		search = agentconfig.SearchPaths()
	}
	f := &agentproc.Finder{ProcRoot: e.opts.ProcRoot, SearchPaths: search}
	return f.FileStatus(e.opts.ConfigPath)
}

// watchRestart looks for the agent processes every RestartEvery and after
// every kick (a config change), and sends what it finds when it differs
// from last (what the engine started with).
func (e *Engine) watchRestart(ctx context.Context, out chan model.Restart, kick <-chan struct{}, last model.Restart) {
	pollChanged(ctx, e.opts.RestartEvery, kick, out, last, e.restartStatus, sameRestart)
}

// sameRestart reports whether two restart states say the same, of the
// same version of the file: a state kept for a newer version's hash, its
// words alike (a write in the same second), left the console reading the
// older version's judgement as the newer's.
func sameRestart(a, b model.Restart) bool {
	return a.State == b.State && a.Detail == b.Detail && slices.Equal(a.PIDs, b.PIDs) && a.ConfigHash == b.ConfigHash
}

// setRestart records the agents' restart state; every agent of the config
// shares the process. It reports whether anything changed.
func (s *state) setRestart(r model.Restart) bool {
	if s.restart == nil {
		s.restart = map[model.AgentID]model.Restart{}
	}
	changed := false
	for _, a := range s.agents {
		if old, ok := s.restart[a.base.ID]; !ok || old.State != r.State || old.Detail != r.Detail || old.ConfigHash != r.ConfigHash {
			changed = true
		}
		s.restart[a.base.ID] = r
	}
	const key = "restart"
	_, had := s.srcIssues[key]
	if r.State == model.RestartPending {
		s.srcIssues[key] = model.Issue{Severity: model.SevWarning, Code: model.IssueRestartPending, File: s.configPath, Message: r.Detail}
		s.issuesDirty = true
	} else if had {
		delete(s.srcIssues, key)
		s.issuesDirty = true
	}
	return changed
}

// watchRestarts asks Options.RestartStates every RestartEvery and after
// every kick, and sends what it says when it changed.
func (e *Engine) watchRestarts(ctx context.Context, out chan map[model.AgentID]model.Restart, kick <-chan struct{}) {
	pollChanged(ctx, e.opts.RestartEvery, kick, out, nil, e.opts.RestartStates, func(a, b map[model.AgentID]model.Restart) bool {
		return maps.EqualFunc(a, b, func(a, b model.Restart) bool { return a.State == b.State && a.Detail == b.Detail })
	})
}

// setRestarts records each agent's own restart state (the demo's agents
// restart one by one). It reports whether anything changed.
func (s *state) setRestarts(rs map[model.AgentID]model.Restart) bool {
	if s.restart == nil {
		s.restart = map[model.AgentID]model.Restart{}
	}
	changed := false
	var pending []string
	for _, a := range s.agents {
		r := rs[a.base.ID]
		if old, ok := s.restart[a.base.ID]; !ok || old.State != r.State || old.Detail != r.Detail {
			changed = true
		}
		s.restart[a.base.ID] = r
		if r.State == model.RestartPending {
			pending = append(pending, string(a.base.ID))
		}
	}
	const key = "restart"
	_, had := s.srcIssues[key]
	if len(pending) > 0 {
		s.srcIssues[key] = model.Issue{Severity: model.SevWarning, Code: model.IssueRestartPending, File: s.configPath,
			Message: "restart pending for " + strings.Join(pending, ", ") + ": they run the partition they started with, not the one agent.toml gives them now"}
		s.issuesDirty = true
	} else if had {
		delete(s.srcIssues, key)
		s.issuesDirty = true
	}
	return changed
}
