package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine/recovery"
	"github.com/fgtop/fgtop/engine/resourcefile"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// kread is what one read of a kernel's config directory gives the engine:
// resource.txt parsed (or why not) and the kernel's recovery.json.
type kread struct {
	spec *resourcefile.Spec
	// torn is resource.txt read as Backend.AI reads it, set when spec is
	// nil only because the last line has no newline: the engine counts it
	// once the file has stayed unchanged for the settle time.
	torn *resourcefile.Spec
	// rec is the recovery record; recErr why there is none (wrapping
	// fs.ErrNotExist when the file does not exist).
	rec    *model.KernelRecord
	recErr error
}

// parser returns the parse function for the watcher, for a node whose slot
// types are types. The specs it returns share names and repeated values
// through sh (read-only, as the state treats them), so the state keeps
// their Slots and Alloc as they are.
func parser(types model.SlotTypes, sh *resourcefile.Shared) scratch.ParseFunc[*kread] {
	// The engine keeps figures only (slots, allocations), never writes the
	// file back: skipping mounts and plugin lines halves the parse and the
	// memory kept per kernel. Errors are the same as a full parse.
	opts := resourcefile.ParseOptions{FiguresOnly: true, Shared: sh}
	lenient := opts
	lenient.AllowTorn = true
	return func(path string, data []byte) (*kread, error) {
		spec, err := opts.Parse(data, types)
		if err != nil {
			var pe *resourcefile.ParseError
			r := &kread{}
			if errors.As(err, &pe) {
				pe.File = path
				if pe.Torn && len(data) > 0 {
					// Only the missing newline: what Python would read.
					if t, terr := lenient.Parse(data, types); terr == nil {
						r.torn = t
					}
				}
			}
			return r, err
		}
		return &kread{spec: spec}, nil
	}
}

// recordCompanion reads recovery.json beside every resource.txt.
func recordCompanion() scratch.Companion[*kread] {
	return scratch.Companion[*kread]{Name: recovery.FileName, Fold: func(v *kread, path string, data []byte, err error) *kread {
		if v == nil {
			v = &kread{}
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// Most kernels of a node may have no record (an older agent):
				// the error is formatted only if someone prints it.
				v.recErr = noRecord(path)
			} else {
				v.recErr = fmt.Errorf("read %s: %w", path, err)
			}
			return v
		}
		v.rec, v.recErr = recovery.Parse(path, data)
		return v
	}}
}

// noRecord is a kernel's missing recovery.json: "PATH: file does not
// exist", wrapping fs.ErrNotExist, as fmt.Errorf("%s: %w") would say it,
// without formatting it on every kernel of a scan.
type noRecord string

func (e noRecord) Error() string { return string(e) + ": " + fs.ErrNotExist.Error() }
func (e noRecord) Unwrap() error { return fs.ErrNotExist }

// rootAgents says, per scratch root, whose kernels may live there.
type rootAgents struct {
	// agents of each root: its own agent first, then every configured
	// agent with that root (several when agents share a root, which
	// Backend.AI allows).
	agents map[string][]model.AgentID
	// fallback is a root's own agent where that agent is not in the
	// config (a --scratch-root that overrides the config's roots: its agent
	// is a name fgtop made up, or one the config lacks). Any configured
	// agent's record is believed there, and a kernel without a record is
	// the root's own, as before records existed.
	fallback map[string]model.AgentID
}

func rootAgentsOf(roots []scratch.Root, agents []model.Agent) rootAgents {
	out := rootAgents{agents: map[string][]model.AgentID{}, fallback: map[string]model.AgentID{}}
	for _, r := range roots {
		list := []model.AgentID{r.Agent}
		own := slices.ContainsFunc(agents, func(a model.Agent) bool { return a.ID == r.Agent })
		for _, a := range agents {
			if slices.Contains(list, a.ID) {
				continue
			}
			if !own || (a.ScratchRoot != "" && samePath(a.ScratchRoot, r.Path)) {
				list = append(list, a.ID)
			}
		}
		if !own && len(agents) > 0 {
			out.fallback[r.Path] = r.Agent
		}
		out.agents[r.Path] = list
	}
	return out
}

func samePath(a, b string) bool { return filepath.Clean(a) == filepath.Clean(b) }

// attribution is who a kernel belongs to and how that was found.
type attribution struct {
	agent model.AgentID
	by    model.AgentBasis
	// issues: a conflict, an unattributable kernel, a bad record.
	issues []model.Issue
}

// attribute finds a kernel's agent the way the agent itself does: the
// agent_id of its recovery.json first, the agent of its scratch root
// second. A record that contradicts the root, or a root shared by several
// agents with no record, is reported, never guessed.
func (s *state) attribute(id model.KernelID, root, path string, rec *model.KernelRecord, recErr error, pending bool) attribution {
	agents := s.rootAgents.agents[root]
	var out attribution
	switch {
	case recErr != nil && rec != nil:
		// Incomplete while rewritten: its last whole version is used.
		out.issues = append(out.issues, model.Issue{Severity: model.SevInfo, Code: model.IssueRecord, Kernel: id,
			File: recordPath(path), Message: fmt.Sprintf("kernel %s: recovery.json is incomplete (%v): its last whole version is used", short(id), stripPath(recErr, recordPath(path)))})
	case recErr != nil && !errors.Is(recErr, fs.ErrNotExist):
		out.issues = append(out.issues, model.Issue{Severity: model.SevWarning, Code: model.IssueRecord, Kernel: id,
			File: recordPath(path), Message: fmt.Sprintf("kernel %s: recovery.json cannot be used: %v", short(id), stripPath(recErr, recordPath(path)))})
	}
	switch {
	case rec != nil && slices.Contains(agents, rec.AgentID):
		out.agent, out.by = rec.AgentID, model.AgentByRecord
	case rec != nil && !s.configured:
		// No agent.toml: the roots' agents are names fgtop made up, and the
		// record is the only word of the agent itself.
		out.agent, out.by = rec.AgentID, model.AgentByRecord
	case rec != nil && !s.isAgent(rec.AgentID) && s.madeUpOf(agents) != "":
		// The agent's id is made up at each start: whatever the record
		// says, the root's only such agent is the one.
		out.agent, out.by = s.madeUpOf(agents), model.AgentByRecord
	case rec != nil:
		why := "which agent.toml does not list"
		if _, known := s.agentIdx[rec.AgentID]; known {
			why = "whose scratch root is elsewhere"
		}
		out.by = model.AgentByNone
		out.issues = append(out.issues, model.Issue{Severity: model.SevError, Code: model.IssueAgentConflict, Kernel: id, Agent: rec.AgentID, File: rec.Path,
			Message: fmt.Sprintf("kernel %s: its recovery.json names agent %s, %s, but it lies in scratch root %s of %s; not attributed to either",
				short(id), rec.AgentID, why, root, joinIDs(agents))})
	case s.rootAgents.fallback[root] != "":
		out.agent, out.by = s.rootAgents.fallback[root], model.AgentByRoot
	case len(agents) == 1:
		out.agent, out.by = agents[0], model.AgentByRoot
	default:
		out.by = model.AgentByNone
		if !pending {
			out.issues = append(out.issues, model.Issue{Severity: model.SevWarning, Code: model.IssueUnattributed, Kernel: id, File: recordPath(path),
				Message: fmt.Sprintf("kernel %s has no usable recovery.json, and its scratch root %s is shared by %s: cannot tell whose it is",
					short(id), root, joinIDs(agents))})
		}
	}
	return out
}

// madeUpOf returns the only agent of agents whose id the config does not
// set, or "" when there is none or more than one.
func (s *state) madeUpOf(agents []model.AgentID) model.AgentID {
	var found model.AgentID
	for _, a := range agents {
		if s.madeUp[a] {
			if found != "" {
				return ""
			}
			found = a
		}
	}
	return found
}

func (s *state) isAgent(id model.AgentID) bool {
	_, ok := s.agentIdx[id]
	return ok
}

func idSet(ids []model.AgentID) map[model.AgentID]bool {
	m := make(map[model.AgentID]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// recordPath is the recovery.json beside a resource.txt path.
func recordPath(resourcePath string) string {
	return filepath.Join(filepath.Dir(resourcePath), recovery.FileName)
}

// stripPath drops a leading "path: " from an error already placed by File.
func stripPath(err error, path string) string {
	return strings.TrimPrefix(err.Error(), path+": ")
}

func joinIDs(ids []model.AgentID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	if len(s) == 1 {
		return "agent " + s[0]
	}
	return "agents " + strings.Join(s, ", ")
}
