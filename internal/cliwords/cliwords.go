// Package cliwords says the command line's own mistakes in fgtop's words:
// an unknown command or help topic (the closest ones, as git does), a
// flag's bad value, an unknown flag (the closest, or the flag another
// command names so), and a file that is not there. It words cobra's and
// pflag's errors; the caller decides the exit status.
package cliwords

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fgtop/fgtop/model"
)

// UnknownCommand words cobra's "unknown command" error the way git does:
// the closest commands, and where the list is. Below the root it is a
// word a command does not take (fgtop man extra) or an unknown one of its
// own subcommands (fgtop completion tcsh), said as such. Other errors
// pass through.
func UnknownCommand(root *cobra.Command, err error) error {
	var name, path string
	if n, _ := fmt.Sscanf(err.Error(), "unknown command %q for %q", &name, &path); n < 1 {
		return err
	}
	cmd := root
	if n := strings.Fields(path); len(n) > 1 {
		if c, _, ferr := root.Find(n[1:]); ferr == nil && c != nil {
			cmd = c
		}
	}
	if cmd != root && !cmd.HasAvailableSubCommands() {
		return fmt.Errorf("%s takes no arguments (got %q)\nrun '%s --help' for how to use it", cmd.CommandPath(), name, cmd.CommandPath())
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if cmd != root {
		msg = fmt.Sprintf("%s: unknown command %q", cmd.CommandPath(), name)
	}
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if sugg := cmd.SuggestionsFor(name); len(sugg) > 0 {
		msg += "; did you mean " + strings.Join(sugg, " or ") + "?"
	} else if names := commandNames(cmd); len(names) > 0 {
		// None is close (fgtop completion xyz, fgtop stats): what there
		// is, not only where it is listed.
		msg += "; commands: " + strings.Join(names, ", ")
	}
	return errors.New(msg + "\nrun '" + cmd.CommandPath() + " --help' for the list of commands")
}

// commandNames are cmd's subcommands an operator may run (not help, nor
// hidden ones), as --help lists them.
func commandNames(cmd *cobra.Command) []string {
	var out []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			out = append(out, c.Name())
		}
	}
	return out
}

// StrictHelp makes `fgtop help TOPIC` answer a topic that is no command
// as `fgtop TOPIC` does (the closest commands; wrap gives the error its
// exit status): cobra's own help
// command printed the root's help and exited 0 for `fgtop help chek`, so
// a typo looked like an answer.
func StrictHelp(root *cobra.Command, wrap func(error) error) {
	root.InitDefaultHelpCmd()
	help, _, err := root.Find([]string{"help"})
	if err != nil || help == root || help.Run == nil {
		return
	}
	show := help.Run
	help.Run = nil
	help.RunE = func(c *cobra.Command, args []string) error {
		cmd, rest, err := c.Root().Find(args)
		if err == nil && len(rest) > 0 {
			// Find stops at the deepest command it knows and leaves the
			// rest: a command whose Args accept words reports none.
			err = fmt.Errorf("unknown command %q for %q", rest[0], cmd.CommandPath())
		}
		if err != nil {
			return wrap(fmt.Errorf("help: %w", UnknownCommand(c.Root(), err)))
		}
		show(c, args)
		return nil
	}
}

// FlagError words pflag's errors (cobra's FlagErrorFunc) for an operator: a
// value said as the user wrote it with what the flag wants (not
// strconv's "parsing ...: invalid syntax"), an unknown flag with the
// closest one, and where the command's flags are listed. The caller
// makes it bad usage.
func FlagError(cmd *cobra.Command, err error) error {
	help := "run '" + cmd.CommandPath() + " --help' for its flags"
	var inv *pflag.InvalidValueError
	var unknown *pflag.NotExistError
	var need *pflag.ValueRequiredError
	switch {
	case errors.As(err, &inv):
		f := inv.GetFlag()
		want := flagWants(f.Value.Type())
		if errors.Is(err, strconv.ErrRange) {
			// A number too large for the flag: "whole number" alone would
			// not say what is wrong with 99999999999999999999.
			want += ", and this one is out of range"
		}
		return fmt.Errorf("--%s %q: %s; %s", f.Name, inv.GetValue(), want, help)
	case errors.As(err, &need):
		return fmt.Errorf("%s needs a value (--%s VALUE: %s); %s", flagSpelled(need.GetSpecifiedName(), need.GetSpecifiedShortnames()), need.GetFlag().Name, need.GetFlag().Usage, help)
	case errors.As(err, &unknown):
		msg := err.Error()
		if name := unknown.GetSpecifiedName(); unknown.GetSpecifiedShortnames() == "" {
			// fgtop --demo: a command of the same name (serve --demo is
			// a flag, the demo console a command).
			if sub, _, err := cmd.Find([]string{name}); err == nil && sub != cmd && sub.Name() == name {
				return fmt.Errorf("%s; did you mean the command `%s`?\n%s", msg, sub.CommandPath(), help)
			}
			// fgtop check --demo: snapshot, serve and exporter take --demo,
			// the others read the demo node through the files fgtop demo
			// names; "did you mean --mem?" sent the operator nowhere.
			if name == "demo" && cmd != cmd.Root() {
				return fmt.Errorf("%s: %s has no demo node of its own; start one with `fgtop demo --headless` in another terminal, which prints the flags that point %s at it\n%s",
					msg, cmd.CommandPath(), cmd.CommandPath(), help)
			}
			if same, ok := flagSynonyms[name]; ok && cmd.Flags().Lookup(same.name) != nil {
				return fmt.Errorf("%s; did you mean --%s? (%s)\n%s", msg, same.name, same.where, help)
			}
			if near := closestFlags(cmd, name); len(near) > 0 {
				msg += "; did you mean --" + strings.Join(near, " or --") + "?"
			}
		}
		return fmt.Errorf("%s\n%s", msg, help)
	}
	return fmt.Errorf("%v\n%s", err, help)
}

// flagWants says what a flag of a pflag value type takes.
func flagWants(typ string) string {
	switch typ {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "want a whole number"
	case "float32", "float64":
		return "want a number"
	case "duration":
		return "want a duration such as 30s, 5m or 1h30m"
	case "bool":
		return "want true or false"
	}
	return "not a valid " + typ
}

// flagSpelled is a flag as the user wrote it: --name, or -x within -xyz.
func flagSpelled(name, shorts string) string {
	if shorts != "" {
		return fmt.Sprintf("-%s (in -%s)", name[:1], shorts)
	}
	return "--" + name
}

// flagSynonyms are flags one command takes under a name the others give
// another: an operator who learned it there types it here (record --dir is
// every other command's --history). where says which command takes it.
var flagSynonyms = map[string]struct{ name, where string }{
	"dir": {"history", "--dir is fgtop record's name for the history directory"},
}

// closestFlags are the command's flags (its own and inherited) within two
// edits of name, or that start with it.
func closestFlags(cmd *cobra.Command, name string) []string {
	var out []string
	seen := map[string]bool{}
	visit := func(f *pflag.Flag) {
		if seen[f.Name] || f.Hidden {
			return
		}
		seen[f.Name] = true
		if model.EditDistance(name, f.Name) <= 2 || (len(name) >= 3 && strings.HasPrefix(f.Name, name)) {
			out = append(out, f.Name)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}

// MissingFile words a file that is not there or cannot be read, for a
// flag's message: "no such file (looked for /abs/path)", "permission
// denied on PATH: ...". "" for any other error, which keeps its own words.
func MissingFile(err error) string {
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
