#!/usr/bin/env bash
# Idle CPU of the console (DESIGN.md target: ≤ 0.5 % of one core with 8 GPUs
# polled once a second).
#
# The real binary runs in a detached tmux session on an 8-GPU mock node: a
# mock-accelerator.toml with eight A100s (fractional mode, the fixture's
# etcd settings) and a scratch root with 16 kernels spread over them (GPU
# shares only: the host's own CPUs and memory are what this machine has, so
# kernels holding them would only add over-capacity issues). The
# engine polls the device source once a second (its default); nothing
# writes to the scratch root, so what is measured is the console at rest:
# the poll, the once-a-second redraw ("updated Ns ago"), Bubble Tea's
# renderer and input reader, and the Go runtime.
#
# After the console shows its bars and a settling time, utime + stime of
# the fgtop process are read from /proc/PID/stat before and after a window
# (60 s by default) and reported as a percentage of one core. tmux's own
# CPU over the same window (it parses what fgtop draws, as a terminal
# would) is reported beside it.
#
#   bash bench/idlecpu.sh                 # builds ./cmd/fgtop
#   FGTOP_BIN=/tmp/fgtop WINDOW=60 SETTLE=10 COLS=160 ROWS=48 bash bench/idlecpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local LC_ALL=C.UTF-8

window=${WINDOW:-60}
settle=${SETTLE:-10}
cols=${COLS:-160}
rows=${ROWS:-48}

work=$(mktemp -d)
sock="fgtop-idle-$$"
tm() { tmux -u -L "$sock" -f /dev/null "$@"; }
cleanup() {
	tm kill-server 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=bench/mocknode.sh
source "$(dirname "$0")/mocknode.sh"
build_fgtop "$work"

make_node "$work" 16

tm new-session -d -s idle -x "$cols" -y "$rows" \
	"cd '$work' && exec env TERM=tmux-256color ./fgtop --scratch-root a=scratch --devices mock-accelerator.toml --mock-etcd etcd.json 2>stderr"
pid=$(tm display -p -t idle '#{pane_pid}')
spid=$(tm display -p -t idle '#{pid}')

end=$((SECONDS + 60))
until tm capture-pane -p -t idle | grep -Eq '^[▶ ] GPU7 +[█░]+ +0\.80/1\.00'; do
	if ((SECONDS >= end)); then
		echo "the console did not show 8 GPUs with bars in 60 s:" >&2
		tm capture-pane -p -t idle >&2
		cat "$work/stderr" >&2
		exit 1
	fi
	sleep 0.2
done

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
sleep "$settle"
a=$(ticks "$pid") sa=$(ticks "$spid") t0=$(date +%s.%N)
sleep "$window"
b=$(ticks "$pid") sb=$(ticks "$spid") t1=$(date +%s.%N)
tm capture-pane -p -t idle | grep -q 'GPU7' || {
	echo "the console is no longer showing the node at the end of the window" >&2
	exit 1
}

awk -v a="$a" -v b="$b" -v sa="$sa" -v sb="$sb" -v t0="$t0" -v t1="$t1" -v hz="$hz" \
	-v cols="$cols" -v rows="$rows" 'BEGIN {
	wall = t1 - t0
	printf "idle console, 8 mock GPUs polled 1/s, 16 kernels, %dx%d, %.1f s window\n", cols, rows, wall
	printf "fgtop: %d ticks (1/%d s) = %.3f s CPU = %.2f %% of one core\n", b - a, hz, (b - a) / hz, 100 * (b - a) / hz / wall
	printf "tmux server (the terminal): %.2f %% of one core\n", 100 * (sb - sa) / hz / wall
}'
