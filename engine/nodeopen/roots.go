package nodeopen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// ParseRoots reads --scratch-root values: "AGENT=DIR" names the agent;
// a bare DIR takes its agent id from the directory's base name. A value
// that is neither, or a directory given twice, is an *InputError.
func ParseRoots(vals []string) ([]scratch.Root, error) {
	var out []scratch.Root
	seen := map[string]bool{}
	for _, v := range vals {
		agent, dir, ok := strings.Cut(v, "=")
		if !ok {
			dir, agent = v, filepath.Base(filepath.Clean(v))
		}
		if dir == "" || agent == "" {
			return nil, inputErr("--scratch-root %q: want DIR or AGENT=DIR", v)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, inputErr("--scratch-root %q: %v", v, err)
		}
		if seen[abs] {
			return nil, inputErr("--scratch-root %s given twice", abs)
		}
		seen[abs] = true
		out = append(out, scratch.Root{Path: abs, Agent: model.AgentID(agent)})
	}
	return out, nil
}

// OwnBareRoots gives each bare --scratch-root DIR (vals, parsed into
// roots) the agent the config gives it: that of the config's root that
// DIR is (configRoots), else a single-agent config's agent. Named for its
// directory alone, it made a new agent of the kernels under it that have
// no recovery.json, and left the config's agent holding none: `apply
// --scratch-root DIR` then wrote a partition below what the agent's live
// kernels hold, without --force, even with DIR the config's own root. A
// bare DIR of a several-agent config that is none of their roots keeps
// its directory's name: each kernel's recovery.json says whose it is.
func OwnBareRoots(vals []string, roots, configRoots []scratch.Root, agents []model.Agent) {
	for i, v := range vals {
		if strings.Contains(v, "=") {
			continue
		}
		owned := false
		for _, r := range configRoots {
			if sameDir(r.Path, roots[i].Path) {
				roots[i].Agent, owned = r.Agent, true
				break
			}
		}
		if !owned && len(agents) == 1 {
			roots[i].Agent = agents[0].ID
		}
	}
}

// sameDir reports whether two absolute paths name one directory, through
// symbolic links too (/var/cache/scratches and the path it links to).
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// CheckRootAgents refuses a --scratch-root AGENT=DIR (vals, parsed into
// roots) whose AGENT the config's agents do not have: a typo quietly made
// a new agent of the kernels under DIR, taken from the agent that runs
// them. A bare DIR is named for its directory and attributed as the agent
// does (recovery.json first), so it is not checked.
func CheckRootAgents(vals []string, roots []scratch.Root, agents []model.Agent, config string) error {
	var ids []string
	for _, a := range agents {
		ids = append(ids, string(a.ID))
	}
	for i, v := range vals {
		if !strings.Contains(v, "=") || slices.Contains(ids, string(roots[i].Agent)) {
			continue
		}
		// In --slot's words (partition.Draft), naming the file the
		// agents come from.
		return inputErr("--scratch-root %s: unknown agent %q; the config's agents are: %s (%s)", v, roots[i].Agent, strings.Join(ids, ", "), config)
	}
	return nil
}

// RefuseBlind is a one-shot report's check of its roots: a root named
// with --scratch-root (named) that does not exist, or any root that
// cannot be read as a directory, would leave its kernels out of an answer
// that looks whole. A root of agent.toml's that does not exist yet holds
// no kernels (the agent creates it) and is only warned about.
func RefuseBlind(roots []scratch.Root, named bool) error {
	var blind []string
	for _, u := range scratch.UnseenRoots(roots, named) {
		if u.Blind {
			blind = append(blind, untrusted.Text(u.Message))
		}
	}
	if len(blind) == 0 {
		return nil
	}
	return inputErr("%s\na one-shot report would leave out the kernels under it: check the path and its permissions (the console and snapshot --follow keep watching for it)", strings.Join(blind, "\n"))
}

// Unseen are WarnRoots' findings: Blind, the roots that leave fgtop
// blind to kernels that may be there; Absent, config roots that do not
// exist (yet).
type Unseen struct {
	Blind, Absent []string
}

// WarnRoots says, a line each on warn (nil: nowhere), which scratch roots do not exist or
// are not directories (scratch.UnseenRoots): a mistyped --scratch-root
// would otherwise show an empty node, with the reason only in the JSON's
// issues. It returns them sorted: the roots that leave fgtop blind, which
// plan and apply refuse to go ahead without, and the config's roots that
// do not exist yet, which check only says it could not check.
func WarnRoots(warn func(line string), opts *engine.Options) (roots Unseen) {
	for _, u := range scratch.UnseenRoots(opts.Roots, opts.RootsOverridden) {
		// The engine reports it too (an issue, in the console's header),
		// and follows the root should it appear.
		if warn != nil {
			warn("warning: " + u.Message)
		}
		if u.Blind {
			roots.Blind = append(roots.Blind, u.Message)
		} else {
			roots.Absent = append(roots.Absent, u.Message)
		}
	}
	return roots
}

// RootPaths are the roots' directories.
func RootPaths(roots []scratch.Root) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r.Path
	}
	return out
}
