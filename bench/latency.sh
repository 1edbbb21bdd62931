#!/usr/bin/env bash
# File written -> frame on screen (DESIGN.md target: ≤ 100 ms), end to end
# with the real binary in a real terminal.
#
# fgtop runs in a detached tmux session on an 8-GPU mock node (the same node
# as bench/idlecpu.sh: eight A100s, 16 kernels of 0.40 shares, two per GPU).
# Each round rewrites one kernel's resource.txt in place, as an agent does
# (open with O_TRUNC, one write), giving it a new cuda.shares figure on
# GPU0, and polls the terminal until GPU0's held/capacity figure shows the
# new sum (0.41/1.00, 0.42/1.00, ...; every round's figure is new). The
# latency is the time from just before the write to the first capture that
# shows the figure. Rounds are spaced by uneven gaps (300-800 ms) so the
# writes do not fall in step with the console's 1 s redraw or the engine's
# poll.
#
# The terminal is read through one tmux control-mode client (tmux -C), not a
# `tmux capture-pane` process per poll: a poll is one command on a pipe that
# captures only GPU0's row, a round trip of well under a millisecond, and
# the poller sleeps POLL_MS (default 2 ms) between polls, so a figure is
# seen at most POLL_MS plus one round trip after tmux has it. The round
# trip is measured and printed so that bound is visible. The poller shares
# the 2 cores with fgtop and tmux, so it can only make the figure worse.
#
# For the breakdown, `fgtop snapshot --follow` watches the same root during
# the same rounds: the engine's part of each round is the time from the
# write to the first snapshot line with the new figure (VERBOSE=1 prints
# both per round), the rest is the console, the pty and tmux.
#
#   bash bench/latency.sh                    # builds ./cmd/fgtop
#   FGTOP_BIN=/tmp/fgtop ROUNDS=30 POLL_MS=2 VERBOSE=1 bash bench/latency.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local LC_ALL=C.UTF-8

rounds=${ROUNDS:-30}
poll_ms=${POLL_MS:-2}
cols=160 rows=48

work=$(mktemp -d)
sock="fgtop-lat-$$"
tm() { tmux -u -L "$sock" -f /dev/null "$@"; }
# stop_ctl: end the control-mode client (EOF on its input, then a signal).
stop_ctl() {
	if [[ -n "${TMC_PID:-}" ]]; then
		# ${TMC[@]} is gone once the client has ended; a bad fd on exec would
		# end this shell, so close only what is still there.
		if [[ -n "${TMC[1]:-}" ]]; then exec {TMC[1]}>&-; fi
		if [[ -n "${TMC[0]:-}" ]]; then exec {TMC[0]}<&-; fi
		kill "$TMC_PID" 2>/dev/null || true
		wait "$TMC_PID" 2>/dev/null || true
		TMC_PID=
	fi
}
cleanup() {
	set +e # every step runs, whatever failed before
	stop_ctl
	if [[ -n "${follow:-}" ]]; then kill "$follow" 2>/dev/null; fi
	tm kill-server 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=bench/mocknode.sh
source "$(dirname "$0")/mocknode.sh"
build_fgtop "$work"

make_node "$work" 16
victim_id=$(printf '%08x-0000-4000-8000-%012x' $((0x1000)) 0) # kernel 0, on GPU0
victim="$work/scratch/$victim_id/config/resource.txt"

# The engine alone, for the breakdown: `fgtop snapshot --follow` watches the
# same root during the same rounds, each JSON line timestamped as it arrives.
cd "$work"
./fgtop snapshot --follow --scratch-root a=scratch --devices mock-accelerator.toml --mock-etcd etcd.json \
	2>follow.err > >(perl -MTime::HiRes=time -ne '$| = 1; printf "%.6f %s", time, $_' >follow.log) &
follow=$! # fgtop itself: perl ends when fgtop's output closes
cd - >/dev/null

tm new-session -d -s lat -x "$cols" -y "$rows" \
	"cd '$work' && exec env TERM=tmux-256color ./fgtop --scratch-root a=scratch --devices mock-accelerator.toml --mock-etcd etcd.json 2>stderr"
tm set -g window-size manual

end=$((SECONDS + 60))
until tm capture-pane -p -t lat | grep -Eq '^[▶ ] GPU7 +[█░]+ +0\.80/1\.00'; do
	if ((SECONDS >= end)); then
		echo "the console did not show the node in 60 s:" >&2
		tm capture-pane -p -t lat >&2
		exit 1
	fi
	sleep 0.2
done
row=$(tm capture-pane -p -t lat | grep -nE '^[▶ ] GPU0 ' | cut -d: -f1)
row=$((row - 1)) # capture-pane counts rows from 0

# The control-mode client: commands in on one pipe, replies out on another.
# no-output: tmux does not stream the pane's output to this client.
mkfifo "$work/never"
exec 9<>"$work/never" # read -t on it is a sleep without a fork
coproc TMC { exec tmux -u -L "$sock" -f /dev/null -C attach -t lat 2>/dev/null; }

# reply: read one command's reply block; its lines land in REPLY_LINES.
reply() {
	local line in=0
	REPLY_LINES=()
	while IFS= read -r line <&"${TMC[0]}"; do
		case $line in
		%begin*) in=1 ;;
		%end* | %error*) ((in)) && return 0 ;;
		%*) ;;
		*) ((in)) && REPLY_LINES+=("$line") ;;
		esac
	done
	echo "tmux control client ended" >&2
	exit 1
}
# ctl CMD: run one tmux command and read its reply.
ctl() {
	printf '%s\n' "$1" >&"${TMC[1]}"
	reply
}
reply # the attach itself
ctl "refresh-client -f no-output"
ctl "display -p -t lat '#{window_width}x#{window_height}'"
[[ ${REPLY_LINES[0]} == "${cols}x$rows" ]] || {
	echo "the control client changed the window to ${REPLY_LINES[0]}" >&2
	exit 1
}

# The cost of one poll, measured before the rounds.
t0=$EPOCHREALTIME
for ((i = 0; i < 200; i++)); do ctl "capture-pane -p -t lat -S $row -E $row"; done
t1=$EPOCHREALTIME
rtt_us=$(((${t1/./} - ${t0/./}) / 200))

poll_s=$(printf '0.%03d' "$poll_ms")
lat=() writes=()
for ((r = 1; r <= rounds; r++)); do
	n=$((r % 60)) && ((n)) || n=60
	shares=$(printf '0.%02d' "$n")
	held=$(printf '%d.%02d' $(((40 + n) / 100)) $(((40 + n) % 100)))
	text=$(resource_txt "$work" "$victim_id" 1 "$shares")
	gap_ms=$((300 + RANDOM % 500))
	read -t "$(printf '%d.%03d' $((gap_ms / 1000)) $((gap_ms % 1000)))" -u 9 || true
	t0=$EPOCHREALTIME
	printf '%s\n' "$text" >"$victim"
	writes+=("$t0 $held")
	deadline=$((${t0/./} + 5000000))
	while :; do
		ctl "capture-pane -p -t lat -S $row -E $row"
		t1=$EPOCHREALTIME
		[[ ${REPLY_LINES[0]:-} == *" $held/1.00 "* ]] && break
		if ((${t1/./} > deadline)); then
			echo "round $r: $held/1.00 not on screen after 5 s; GPU0 row: ${REPLY_LINES[0]:-}" >&2
			exit 1
		fi
		read -t "$poll_s" -u 9 || true
	done
	lat+=($(((${t1/./} - ${t0/./}) / 100))) # tenths of a millisecond
done
read -t 0.3 -u 9 || true
kill "$follow"
wait "$follow" 2>/dev/null || true

# The engine's share of each round: from the write to the first
# `snapshot --follow` line whose GPU0 figure is the new one.
eng=($(printf '%s\n' "${writes[@]}" | perl -e '
	open(my $log, "<", $ARGV[0]) or die "$ARGV[0]: $!\n"; my @lines = <$log>;
	while (my $w = <STDIN>) {
		my ($t0, $want) = split " ", $w; my $seen;
		for (@lines) {
			my ($t, $json) = split / /, $_, 2;
			next if $t < $t0;
			if ($json =~ /2d01"[^{]*"held":\{"cuda.shares":"\Q$want\E"\}/) { $seen = $t; last }
		}
		defined $seen or die "engine: GPU0 never showed $want after the write at $t0\n";
		printf "%d\n", ($seen - $t0) * 10000;
	}' "$work/follow.log"))

# stats LABEL: median, p90 and max of the tenths of a millisecond on stdin.
stats() {
	sort -n | awk -v label="$1" '
	{ v[++n] = $1 / 10 }
	END {
		p90 = v[int((n * 9 + 9) / 10)]
		med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		printf "%s, %d rounds: median %.1f ms, p90 %.1f ms, max %.1f ms (min %.1f)\n", label, n, med, p90, v[n], v[1]
	}'
}
if [[ -n "${VERBOSE:-}" ]]; then
	echo "round: screen ms / engine ms"
	for ((r = 0; r < rounds; r++)); do
		printf '%3d: %6d.%d / %4d.%d\n' $((r + 1)) $((lat[r] / 10)) $((lat[r] % 10)) $((eng[r] / 10)) $((eng[r] % 10))
	done
fi
printf '%s\n' "${lat[@]}" | stats "file written -> frame on screen"
printf '%s\n' "${eng[@]}" | stats "  of which the engine (same writes, fgtop snapshot --follow)"
printf 'poll: one control-mode capture of the GPU0 row = %d.%02d ms round trip, every %d ms\n' \
	$((rtt_us / 1000)) $((rtt_us % 1000 / 10)) "$poll_ms"
