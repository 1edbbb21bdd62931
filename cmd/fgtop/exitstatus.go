package main

import (
	"strings"
)

// exitStatus is the one exit-status table of every command: --help, the
// manual page and the README say it in these words (TestExitStatusTable
// holds the README to them). Scripts can trust it: 1 is a finding, never
// a mistake of the caller; 2 is a mistake of the caller or of the file;
// 3 is a written config whose restart failed (1 writes nothing).
var exitStatus = []struct{ code, what string }{
	{"0", "ok: the command did what it was asked (snapshot, the console, serve and exporter until stopped; " +
		"check: the agent loads the file and the live state matches it; plan: the change is valid or there is none; " +
		"apply and rollback: written and read back; simulate: every request was placed and every free freed; fleet --once, --at and history: every node answered)"},
	{"1", "a finding: check found drift, could not read the live state it compares with, or could not judge a manual partition's accelerator amounts (the node's GPUs or their capacities unknown); " +
		"plan --replay and --arrivals: some session would not have started (with no change flag: the rules would have refused some the record saw run); simulate: a request cannot be placed, a free fails, or --check found a difference; fleet --once and --at: a node is unreachable, stale or marked (--at: without data then); fleet history: a node did not answer or lacks part of the span; fleet --fit: no live node takes the request; " +
		"apply and rollback: not confirmed, refused (live kernels hold devices that move or more than their agent's new amount, or would if kernels whose agent cannot be told are its; a scratch root or a kernel file cannot be read; a manual partition's accelerator amounts change on a node whose GPUs or their capacities are unknown; agent.toml is read-only; --force overrides) or failed, nothing to roll back; " +
		"snapshot --at and history: the record lacks the moment or part of the span asked, or holds nothing"},
	{"2", "bad usage or bad input: an unknown command or flag, a value fgtop cannot read (--cpu a=abc, --mem a=0.3K, --mem a=-10g), " +
		"a file that cannot be read or parsed, a config the agent would refuse to load or start with (check), a plan that is invalid (plan, apply), " +
		"plan --replay with nothing to replay (no record yet, or a span outside it), " +
		"a console without a terminal, apply without --yes and no terminal to confirm"},
	{"3", "apply and rollback: the config is written and read back, but the --restart-cmd command failed or ran past --restart-timeout " +
		"(the agent may still run the old config: restart it, or roll back)"},
}

// exitStatusHelp is the table as --help prints it, indented and wrapped
// at width columns.
func exitStatusHelp(width int) string {
	var b strings.Builder
	b.WriteString("Exit status (every command):\n")
	for _, r := range exitStatus {
		line := "  " + r.code + "  "
		pad := strings.Repeat(" ", len(line))
		for i, w := range strings.Fields(r.what) {
			if i > 0 && len(line)+1+len(w) > width {
				b.WriteString(line + "\n")
				line = pad + w
				continue
			}
			if i > 0 {
				line += " "
			}
			line += w
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
