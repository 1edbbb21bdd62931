package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fgtop/fgtop/engine/agentconfig"
)

// configErr words a failure to read an agent.toml for an operator: where
// fgtop looked and what to do. path is the file named with --config, or
// the one found in Backend.AI's usual places (found). Other errors
// (the file is not TOML, breaks the agent's rules) already name the file
// and the line and pass through. Always a usage error (exit 2).
func configErr(path string, found bool, err error) error {
	how := path + " (given with --config)"
	if found {
		how = path + " (found where Backend.AI looks)"
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		abs, _ := filepath.Abs(path)
		return usageErr("no agent config at %s: fgtop looked for %s; check the path, or leave --config out to use the first that exists of Backend.AI's usual places (%s)",
			how, abs, strings.Join(agentconfig.SearchPaths(), ", "))
	case errors.Is(err, fs.ErrPermission):
		return usageErr("cannot read the agent config %s: permission denied; run fgtop as root or as the user the agent runs as (e.g. sudo fgtop ...)", how)
	}
	if found {
		return usageErr("%v\n(fgtop found this agent.toml where Backend.AI looks for one; name another with --config FILE)", err)
	}
	return usageErr("--config: %v", err)
}

// unknownCommand words cobra's "unknown command" error the way git does:
// the closest commands, and where the list is. Other errors pass through.
func unknownCommand(root *cobra.Command, err error) error {
	var name, path string
	if n, _ := fmt.Sscanf(err.Error(), "unknown command %q for %q", &name, &path); n < 1 {
		return err
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if root.SuggestionsMinimumDistance <= 0 {
		root.SuggestionsMinimumDistance = 2
	}
	if sugg := root.SuggestionsFor(name); len(sugg) > 0 {
		msg += "; did you mean " + strings.Join(sugg, " or ") + "?"
	}
	return errors.New(msg + "\nrun 'fgtop --help' for the list of commands")
}

// coreListSyntax reports whether spec reads as --cpu takes it: core
// numbers and LOW-HIGH ranges, comma-separated (a lone number is also the
// slot-based format's core count). Whether the cores exist is the plan's
// to say; a spec that is not even numbers is bad usage.
func coreListSyntax(spec string) bool {
	digits := func(s string) bool {
		if s == "" || len(s) > 9 {
			return false
		}
		for _, r := range s {
			if r < '0' || r > '9' {
				return false
			}
		}
		return true
	}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		if !digits(lo) || (isRange && !digits(hi)) {
			return false
		}
	}
	return true
}

// missingFile words a file that is not there or cannot be read, for a
// flag's message: "no such file (looked for /abs/path)", "permission
// denied on PATH: ...". "" for any other error, which keeps its own words.
func missingFile(err error) string {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return ""
	}
	abs, aerr := filepath.Abs(pe.Path)
	if aerr != nil {
		abs = pe.Path
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file (looked for " + abs + ")"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied on " + abs + ": run fgtop as root or as a user that can read it"
	}
	return ""
}
