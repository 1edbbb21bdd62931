package cliwords

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func testRoot() *cobra.Command {
	root := &cobra.Command{Use: "fgtop", SilenceErrors: true, SilenceUsage: true}
	check := &cobra.Command{Use: "check", RunE: func(*cobra.Command, []string) error { return nil }}
	check.Flags().Int("rounds", 1, "rounds")
	check.Flags().String("history", "", "the history directory")
	root.AddCommand(check, &cobra.Command{Use: "snapshot", RunE: func(*cobra.Command, []string) error { return nil }})
	root.SetFlagErrorFunc(FlagError)
	StrictHelp(root, func(err error) error { return err })
	return root
}

// TestWords: each of cobra's and pflag's errors an operator meets is said
// with what to do: the closest command or flag, what a flag's value wants,
// the other command's name for a flag, a help topic that is no command.
func TestWords(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"chek"}, []string{`unknown command "chek"`, "did you mean check?", "fgtop --help"}},
		{[]string{"help", "chek"}, []string{`help: unknown command "chek"`, "did you mean check?"}},
		// Nothing close: the commands there are, not only where they are
		// listed (the tour's fgtop completion xyz).
		{[]string{"xyz"}, []string{`unknown command "xyz"; commands: check, completion, snapshot`, "fgtop --help"}},
		{[]string{"help", "xyz"}, []string{`help: unknown command "xyz"; commands: check, completion, snapshot`}},
		{[]string{"check", "--rounds", "many"}, []string{`--rounds "many": want a whole number`, "fgtop check --help"}},
		{[]string{"check", "--rounds", "99999999999999999999"}, []string{"out of range"}},
		{[]string{"check", "--histroy", "x"}, []string{"did you mean --history?"}},
		{[]string{"check", "--dir", "x"}, []string{"did you mean --history? (--dir is fgtop record's name"}},
		{[]string{"check", "--demo"}, []string{"fgtop check has no demo node of its own", "fgtop demo --headless"}},
		{[]string{"check", "--history"}, []string{"--history needs a value"}},
	} {
		root := testRoot()
		root.SetArgs(c.args)
		err := root.Execute()
		if err == nil {
			t.Errorf("%v: no error", c.args)
			continue
		}
		msg := UnknownCommand(root, err).Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q lacks %q", c.args, msg, w)
			}
		}
	}
}

// TestMissingFile: a file not there names where fgtop looked; a file it
// may not read says what to run as; any other error keeps its own words.
func TestMissingFile(t *testing.T) {
	dir := t.TempDir()
	_, err := os.Open(filepath.Join(dir, "nope"))
	if got := MissingFile(err); got != "no such file (looked for "+filepath.Join(dir, "nope")+")" {
		t.Errorf("not there: %q", got)
	}
	if got := MissingFile(errors.New("other")); got != "" {
		t.Errorf("another error: %q", got)
	}
}
