package simulate

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/internal/safefile"
)

// loadCases reads the corpus cases of path (--case), one case or a list
// in alloc-cases.json's format; only the one whose id is id, when id is
// not "" (--case-id).
func loadCases(path, id string) ([]placement.Case, error) {
	data, err := safefile.ReadFile(path, inventory.MaxMockFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		// As --devices says it, not as open(2) does.
		abs, aerr := filepath.Abs(path)
		if aerr != nil {
			abs = path
		}
		return nil, usage("--case %s: no such file (looked for %s)", path, abs)
	} else if err != nil {
		return nil, usage("--case: %v", err)
	}
	cases, err := placement.ParseCases(data)
	if err != nil {
		return nil, usage("--case %s: %v", path, err)
	}
	if id != "" {
		i := slices.IndexFunc(cases, func(c placement.Case) bool { return c.ID == id })
		if i < 0 {
			return nil, usage("--case-id %s: no such case in %s", id, path)
		}
		cases = cases[i : i+1]
	}
	if len(cases) == 0 {
		return nil, usage("--case %s: no cases", path)
	}
	return cases, nil
}

// Overrides are the allocator settings s of the flags given explicitly
// (given says which, by name: strategy, affinity, quantum,
// no-fragmentation, whose value is forbid), which override a case's own.
func Overrides(s placement.Settings, forbid bool, given func(flag string) bool) placement.CaseOverrides {
	var o placement.CaseOverrides
	if given("strategy") {
		o.Strategy = &s.Strategy
	}
	if given("affinity") {
		o.Policy = &s.Policy
	}
	if given("quantum") {
		o.Quantum = s.Quantum
	}
	if given("no-fragmentation") {
		o.ForbidFragmentation = &forbid
	}
	return o
}

// RunCases runs the cases loadCases reads from path (and id) with the
// overrides of the flags given explicitly, which overrides reads once the
// cases are read (its error comes back as it is). trace keeps each step's
// state, which a check needs. A case the allocators cannot run is bad
// input, named for path.
func RunCases(path, id string, overrides func() (placement.CaseOverrides, error), trace bool) ([]placement.CaseRun, error) {
	cases, err := loadCases(path, id)
	if err != nil {
		return nil, err
	}
	o, err := overrides()
	if err != nil {
		return nil, err
	}
	outs, err := placement.RunCases(cases, o, trace)
	var bad *placement.BadCaseError
	switch {
	case errors.As(err, &bad):
		return nil, usage("--case %s: %v", path, bad.Err)
	case err != nil:
		return nil, fmt.Errorf("simulate: %w", err)
	}
	return outs, nil
}
