package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/listenaddr"
)

// sayOn says a package's lines (a warning, what it goes on without) on w
// with fgtop's prefix, as every line fgtop writes on stderr begins.
func sayOn(w io.Writer) func(line string) {
	return func(line string) { fmt.Fprintln(w, "fgtop:", line) }
}

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
		// The absolute path only where it says more than the path given:
		// "no agent config at /x.toml (...): fgtop looked for /x.toml".
		if abs, aerr := filepath.Abs(path); aerr == nil && abs != path {
			how += ": fgtop looked for " + abs
		}
		return usageErr("no agent config at %s; check the path, or leave --config out to use the first that exists of Backend.AI's usual places (%s)",
			how, strings.Join(agentconfig.SearchPaths(), ", "))
	case errors.Is(err, fs.ErrPermission):
		return usageErr("cannot read the agent config %s: permission denied; run fgtop as root or as the user the agent runs as (e.g. sudo fgtop ...)", how)
	}
	if found {
		return usageErr("%v\n(fgtop found this agent.toml where Backend.AI looks for one; name another with --config FILE)", err)
	}
	return usageErr("--config: %v", err)
}

// listenErr is listenaddr.Failed, bad usage (exit 2).
func listenErr(flag, addr string, err error) error {
	return usageErr("%s %w", flag, listenaddr.Failed(addr, err))
}
