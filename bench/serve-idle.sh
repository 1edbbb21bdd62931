#!/usr/bin/env bash
# CPU of `fgtop serve --demo` per idle viewer session, over the real ssh
# client (issue 29 target: ≤ 0.05 % of a core per session with 50).
#
# The server runs the embedded demo node (its simulated agents keep
# creating and ending kernels, so the consoles do change) with a fresh
# ed25519 host key and an authorized_keys file holding one viewer key, in a
# temporary directory; session limits are raised so 50 consoles of one key
# fit (--max-sessions, --max-viewer-sessions, --max-sessions-per-key) and
# --idle-timeout 0 keeps idle sessions open. Each session is OpenSSH's ssh
# -tt in a window of its own in one detached tmux server, at COLSxROWS: a
# terminal as a viewer's would be. Sessions are opened a few at a time, as
# the server's per-source startup limit (10:30:20) would drop a burst, and
# each must show the console (its "Devices (" pane title) before the next
# batch.
#
# For each count in COUNTS (default "0 1 10 50"; 0 is the server with no
# session, the baseline) the script opens sessions up to that count, lets
# them settle for SETTLE seconds, reads utime+stime of the server process
# (/proc/PID/stat) over WINDOW seconds, and checks every session still
# shows the console. It prints the server's CPU, RSS and threads at each
# count, the per-session CPU ((CPU at N - CPU at 0) / N), and, for the
# load they add to the machine, the CPU of the ssh clients and of tmux.
# At the end it prints the server's count of frame changes written as
# another session had computed them (frames_shared) and computed
# (frames_diffed), where the server logs them, and the frames the
# read-only sessions took as composed by another in the same state
# (compositions_taken) and composed (compositions_made).
#
#   bash bench/serve-idle.sh                           # builds ./cmd/fgtop
#   FGTOP_BIN=/tmp/fgtop WINDOW=30 COUNTS="0 1 10 50" bash bench/serve-idle.sh
#   COLS=80 ROWS=24 bash bench/serve-idle.sh
#   SETTLE0=5 SETTLE=330 COUNTS="0 50" bash bench/serve-idle.sh  # at rest for days:
#       the sessions' history graphs (five minutes) all full, so idle viewers draw the same frames
#
# SETTLE0 is the settle before the baseline (0 sessions), SETTLE by default.
# PERF=PREFIX also records each window's profile of the server's threads
# (perf record -F 4999 -g) into PREFIX.N for N sessions; read one with
# perf report -i PREFIX.50 --children --sort sym --stdio -g none.
#
# It fails (exit 1) when the server does not start, a session does not
# show the console within 60 s, or one is gone at the end of a window.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local LC_ALL=C.UTF-8

window=${WINDOW:-30}
settle=${SETTLE:-5}
settle0=${SETTLE0:-$settle}
counts=${COUNTS:-0 1 10 50}
cols=${COLS:-160}
rows=${ROWS:-48}
batch=${BATCH:-5}

work=$(mktemp -d)
sock="fgtop-serve-idle-$$"
tm() { tmux -u -L "$sock" -f /dev/null "$@"; }
cleanup() {
	set +e
	tm kill-server 2>/dev/null
	if [[ -n ${spid:-} ]]; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		# How many frame changes the sessions wrote as another session
		# had computed them, and how many were computed (logged by a
		# server that shares them).
		grep -o 'frames_shared=[0-9]* frames_diffed=[0-9]*' "$work/serve.log" 2>/dev/null | tail -1
		# How many frames the read-only sessions took as another in the
		# same state had composed them, and how many were composed.
		grep -o 'compositions_taken=[0-9]* compositions_made=[0-9]*' "$work/serve.log" 2>/dev/null | tail -1 || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
die() {
	echo "serve-idle: $*" >&2
	exit 1
}

bin=${FGTOP_BIN:-$work/fgtop}
[[ -n ${FGTOP_BIN:-} ]] || CGO_ENABLED=1 go build -o "$bin" ./cmd/fgtop
max=0
for n in $counts; do ((n > max)) && max=$n; done

chmod 700 "$work"
ssh-keygen -q -t ed25519 -N '' -C serve-idle -f "$work/id"
cp "$work/id.pub" "$work/authorized_keys"
chmod 600 "$work/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
lim=$((max + 4))
"$bin" serve --demo --listen "127.0.0.1:$port" --authorized-keys "$work/authorized_keys" \
	--host-key "$work/host_key" --log "$work/serve.log" --idle-timeout 0 \
	--max-sessions "$lim" --max-viewer-sessions "$lim" --max-sessions-per-key "$lim" \
	>"$work/serve.out" 2>&1 &
spid=$!
end=$((SECONDS + 30))
until grep -q 'msg=listening' "$work/serve.log" 2>/dev/null; do
	[[ -d /proc/$spid ]] || {
		cat "$work/serve.out" "$work/serve.log" >&2 2>/dev/null
		die "fgtop serve --demo exited"
	}
	((SECONDS < end)) || die "fgtop serve did not listen within 30 s: $(cat "$work/serve.out")"
	sleep 0.2
done

sshcmd="ssh -F /dev/null -i '$work/id' -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -tt -p $port viewer@127.0.0.1"
# A session with no window yet: tmux needs one to start its server, a
# shell that waits (not measured, and killed with the server).
tm new-session -d -s v -n idle -x "$cols" -y "$rows" "sleep 100000"
shows() { tm capture-pane -p -t "v:s$1" 2>/dev/null | grep -q 'Devices ('; }
open=0
# open_to N: sessions 1..N, a batch at a time, each showing the console.
open_to() {
	while ((open < $1)); do
		local from=$((open + 1)) to=$((open + batch))
		((to > $1)) && to=$1
		for ((i = from; i <= to; i++)); do
			tm new-window -d -t v -n "s$i" "exec $sshcmd 2>'$work/ssh$i.err'"
		done
		for ((i = from; i <= to; i++)); do
			local end=$((SECONDS + 60))
			until shows "$i"; do
				if ((SECONDS >= end)); then
					tm capture-pane -p -t "v:s$i" >&2 2>/dev/null || true
					cat "$work/ssh$i.err" "$work/serve.log" >&2 2>/dev/null
					die "session $i does not show the console after 60 s"
				fi
				sleep 0.2
			done
		done
		open=$to
	done
}

hz=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
status() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# clients: CPU ticks of every ssh client (the panes' processes) so far.
clients() {
	local s=0 p
	for p in $(tm list-panes -s -t v -F '#{pane_pid}' 2>/dev/null); do
		[[ -r /proc/$p/stat ]] && s=$((s + $(ticks "$p")))
	done
	echo "$s"
}
tsrv=$(tm display -p -t v '#{pid}')

echo "fgtop: $bin $("$bin" version | head -1)"
echo "serve --demo on 127.0.0.1:$port, viewers ${cols}x$rows, window ${window}s, settle ${settle}s, $(nproc) CPUs"
base=""
declare -A cpu
for n in $counts; do
	open_to "$n"
	if ((n == 0)); then sleep "$settle0"; else sleep "$settle"; fi
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	a=$(ticks "$spid") ca=$(clients) ta=$(ticks "$tsrv") t0=$(date +%s.%N)
	if [[ -n ${PERF:-} ]]; then
		perf record -q -F 4999 -g -o "$PERF.$n" -t "$(ls "/proc/$spid/task" | paste -sd,)" -- sleep "$window" >/dev/null 2>&1 &
		perfpid=$!
	fi
	sleep "$window"
	[[ -z ${PERF:-} ]] || wait "$perfpid"
	b=$(ticks "$spid") cb=$(clients) tb=$(ticks "$tsrv") t1=$(date +%s.%N)
	[[ -d /proc/$spid ]] || die "the server exited during the window of $n sessions"
	for ((i = 1; i <= n; i++)); do
		shows "$i" || die "session $i no longer shows the console at the end of the window of $n sessions"
	done
	live=$(grep -c 'msg=connect' "$work/serve.log" || true)
	gone=$(grep -c 'msg=disconnect' "$work/serve.log" || true)
	((live - gone == n)) || die "the server logged $live connects and $gone disconnects, want $n open sessions"
	c=$(awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" -v hz="$hz" 'BEGIN { printf "%.4f", 100 * (b - a) / hz / (t1 - t0) }')
	cpu[$n]=$c
	[[ $n == 0 ]] && base=$c
	per="-"
	if ((n > 0)) && [[ -n $base ]]; then
		per=$(awk -v c="$c" -v b="$base" -v n="$n" 'BEGIN { printf "%.4f %%", (c - b) / n }')
	fi
	awk -v n="$n" -v c="$c" -v per="$per" -v rss="$(status "$spid" VmRSS)" -v th="$(status "$spid" Threads)" \
		-v ca="$ca" -v cb="$cb" -v ta="$ta" -v tb="$tb" -v t0="$t0" -v t1="$t1" -v hz="$hz" -v load="$load" 'BEGIN {
		w = t1 - t0
		printf "%2d sessions: server %7.3f %% of a core  per session %s  RSS %6.1f MB  %3d threads | ssh clients %.3f %%, tmux %.3f %% | load %s\n",
			n, c, per, rss / 1024, th, 100 * (cb - ca) / hz / w, 100 * (tb - ta) / hz / w, load
	}'
done
[[ -n $base ]] || echo "(no 0 in COUNTS: no baseline, so no per-session figure)"
