package main

import (
	"strings"
	"testing"
)

// TestFleetHasNoHistoryFlag: the fleet's console records nothing, so
// --history (which the node consoles share) is no flag of fleet's: it was
// listed as "record the node's history into DIR" and did nothing.
func TestFleetHasNoHistoryFlag(t *testing.T) {
	code, out := runCLI(t, "fleet", "--hosts", "127.0.0.1:1", "--once", "--history", t.TempDir())
	wantCode(t, code, exitBadUsage, out, "unknown flag: --history")
	if _, out := runCLI(t, "fleet", "--help"); strings.Contains(out, "      --history ") {
		t.Fatalf("fleet --help lists --history:\n%s", out)
	}
}

// TestFleetOnceChecksTheme: --theme is the console's, but a name that is no
// theme is bad usage whatever the run: with --once, --fit or --at it was
// never read, and a typo printed the table and exited 0.
func TestFleetOnceChecksTheme(t *testing.T) {
	for _, mode := range [][]string{{"--once"}, {"--fit", "cuda.shares=1"}, {"--at", "-1m"}} {
		args := append([]string{"fleet", "--prometheus", "http://127.0.0.1:1", "--timeout", "1s", "--theme", "nosuch"}, mode...)
		code, out := runCLI(t, args...)
		wantCode(t, code, exitBadUsage, out, `unknown theme "nosuch"`)
		if !strings.Contains(out, "mono") {
			t.Errorf("%v: the error does not list the themes:\n%s", mode, out)
		}
	}
}

// TestFleetQuantumHelpSaysNoDefault: a node whose quantum_size is unknown
// is placed nothing of shares unless --quantum gives one (fleet.QuantumKnown,
// docs/fleet.md); fleet --help said "default: the node's, else 0.01", a
// default the fleet never uses.
func TestFleetQuantumHelpSaysNoDefault(t *testing.T) {
	_, out := runCLI(t, "fleet", "--help")
	i := strings.Index(out, "--quantum ")
	if i < 0 {
		t.Fatalf("fleet --help lists no --quantum:\n%s", out)
	}
	line, _, _ := strings.Cut(out[i:], "\n")
	if strings.Contains(line, "0.01") || !strings.Contains(line, "unknown") {
		t.Errorf("fleet --help: %q, want no made-up default, and what an unknown quantum does", line)
	}
}

// TestFleetEmptyFitOrAt: --at "$WHEN" or --fit "$REQ" with the variable
// empty was taken as no flag: the live fleet (or, without a terminal,
// "--json needs --once, --fit or --at" for a --fit that was given); an
// empty value is bad usage.
func TestFleetEmptyFitOrAt(t *testing.T) {
	for _, flag := range []string{"--fit", "--at"} {
		code, out := runCLI(t, "fleet", "--prometheus", "http://127.0.0.1:1", "--timeout", "1s", "--json", flag, "")
		wantCode(t, code, exitBadUsage, out, "--fit and --at need a value")
	}
}

// TestWithJSONFlagsNeedJSON: flags whose help says "with --json" were
// ignored without it: fleet --once --compact printed the table and exit 0,
// as did simulate --trace, so a script that meant --json got a table.
func TestWithJSONFlagsNeedJSON(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fleet", "--prometheus", "http://127.0.0.1:1", "--timeout", "1s", "--once", "--compact"}, "--compact needs --json"},
		{[]string{"simulate", "--devices", "auto", "--request", "cuda.shares=1", "--trace"}, "--trace needs --json"},
		{[]string{"simulate", "--devices", "auto", "--request", "cuda.shares=1", "--compact"}, "--compact needs --json"},
		{[]string{"simulate", "--case", "cases.json", "--trace"}, "--trace needs --json"},
	} {
		code, out := runCLI(t, tc.args...)
		wantCode(t, code, exitBadUsage, out, tc.want)
	}
}

// TestFleetSourceFlags: a flag that only the other source reads was
// dropped without a word (--hosts with --refresh streamed every
// --heartbeat, exit 0 or 1 as if it applied); now exit 2, naming the
// source that reads it.
func TestFleetSourceFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fleet", "--hosts", "127.0.0.1:1", "--once", "--timeout", "1s", "--refresh", "5s"}, "--refresh applies only with --prometheus"},
		{[]string{"fleet", "--hosts", "127.0.0.1:1", "--once", "--timeout", "1s", "--lookback", "1h"}, "--lookback applies only with --prometheus"},
		{[]string{"fleet", "--prometheus", "http://127.0.0.1:1", "--once", "--timeout", "1s", "--heartbeat", "5s"}, "--heartbeat applies only with --hosts"},
		{[]string{"fleet", "--prometheus", "http://127.0.0.1:1", "--once", "--timeout", "1s", "--identity", "id"}, "--identity applies only with --hosts"},
		{[]string{"fleet", "--prometheus", "http://127.0.0.1:1", "--once", "--timeout", "1s", "--user", "ops"}, "--user applies only with --hosts"},
	} {
		code, out := runCLI(t, tc.args...)
		wantCode(t, code, exitBadUsage, out, tc.want)
	}
	// The source's own flags still run: the check can pass.
	if code, out := runCLI(t, "fleet", "--prometheus", "http://127.0.0.1:1", "--once", "--timeout", "1s", "--refresh", "5s", "--lookback", "1h"); code == exitBadUsage {
		t.Errorf("--prometheus with --refresh and --lookback: exit %d\n%s", code, out)
	}
}

// TestFleetAtFlagHelp: --at prints JSON with --json and is bounded by
// --timeout like --once and --fit (fleet.check, the run's one shot), but
// the two flags' help named only --once and --fit, so an operator read
// --json --at as refused and --at as unbounded.
func TestFleetAtFlagHelp(t *testing.T) {
	fl := newFleetCmd().Flags()
	for _, name := range []string{"json", "timeout"} {
		if u := fl.Lookup(name).Usage; !strings.Contains(u, "--at") {
			t.Errorf("--%s: %q does not name --at", name, u)
		}
	}
}
