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
# BASE_BIN=PATH runs a second server beside the first (another build, e.g.
# main's), with as many sessions of its own, started and measured in the
# same minutes: on a machine shared with other work the load moves the
# figures more than a change does, and only servers measured over the same
# windows compare. Each server runs its own demo node (their random churn
# differs).
#
# For each count in COUNTS (default "0 1 10 50"; 0 is the server with no
# session, the baseline) the script opens sessions up to that count on
# each server, lets them settle for SETTLE seconds, then reads utime+stime
# of each server process (/proc/PID/stat) at the same instants over
# WINDOWS windows (default 3) of WINDOW seconds each, and checks every
# session still shows the console. It prints each server's CPU at each
# count as the median of the windows (and their range), its RSS and
# threads, the per-session CPU ((median at N - median at 0) / N), and, for
# the load they add to the machine, the CPU of the ssh clients and of
# tmux. At the end it prints each server's count of frame changes written
# as another session had computed them (frames_shared) and computed
# (frames_diffed), where the server logs them, and the frames the
# read-only sessions took as composed by another in the same state
# (compositions_taken) and composed (compositions_made).
#
#   bash bench/serve-idle.sh                           # builds ./cmd/fgtop
#   FGTOP_BIN=/tmp/fgtop WINDOW=30 COUNTS="0 1 10 50" bash bench/serve-idle.sh
#   FGTOP_BIN=/tmp/this BASE_BIN=/tmp/main WINDOWS=5 WINDOW=10 COUNTS="0 10 50" bash bench/serve-idle.sh
#   COLS=80 ROWS=24 bash bench/serve-idle.sh
#   SETTLE0=5 SETTLE=330 COUNTS="0 50" bash bench/serve-idle.sh  # at rest for days:
#       the sessions' history graphs (five minutes) all full, so idle viewers draw the same frames
#
# SETTLE0 is the settle before the baseline (0 sessions), SETTLE by default.
# PERF=PREFIX also records the first window's profile of the (first)
# server's threads (perf record -F 4999 -g) into PREFIX.N for N sessions;
# read one with perf report -i PREFIX.50 --children --sort sym --stdio -g none.
# STRACE=PREFIX counts the (first) server's system calls over the first
# window into PREFIX.N (strace -c -f; it slows the server, so that window's
# CPU is left out of the median).
#
# It fails (exit 1) when a server does not start, a session does not
# show the console within 60 s, or one is gone at the end of a window.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local LC_ALL=C.UTF-8

window=${WINDOW:-30}
windows=${WINDOWS:-3}
settle=${SETTLE:-5}
settle0=${SETTLE0:-$settle}
counts=${COUNTS:-0 1 10 50}
cols=${COLS:-160}
rows=${ROWS:-48}
batch=${BATCH:-5}

work=$(mktemp -d)
sock="fgtop-serve-idle-$$"
tm() { tmux -u -L "$sock" -f /dev/null "$@"; }
# Server k: bins[k] its binary, names[k] what the output calls it, spids[k]
# its process, ports[k] its port; its files are in $work/k, its sessions
# are tmux windows k-1 ... k-N.
bins=() names=() spids=() ports=()
cleanup() {
	set +e
	tm kill-server 2>/dev/null
	for k in "${!spids[@]}"; do
		kill "${spids[$k]}" 2>/dev/null
		wait "${spids[$k]}" 2>/dev/null
		# How many frame changes the sessions wrote as another session
		# had computed them, and how many were computed; how many
		# frames the read-only sessions took as another in the same
		# state had composed them, and how many were composed (logged
		# by a server that shares them).
		echo "${names[$k]}: $(grep -o 'frames_shared=[0-9]* frames_diffed=[0-9]*' "$work/$k/serve.log" 2>/dev/null | tail -1)" \
			"$(grep -o 'compositions_taken=[0-9]* compositions_made=[0-9]*' "$work/$k/serve.log" 2>/dev/null | tail -1)"
	done
	rm -rf "$work"
}
trap cleanup EXIT
die() {
	echo "serve-idle: $*" >&2
	exit 1
}

bin=${FGTOP_BIN:-$work/fgtop}
[[ -n ${FGTOP_BIN:-} ]] || CGO_ENABLED=1 go build -o "$bin" ./cmd/fgtop
bins=("$bin") names=(this)
if [[ -n ${BASE_BIN:-} ]]; then
	bins+=("$BASE_BIN") names+=(base)
fi
max=0
for n in $counts; do ((n > max)) && max=$n; done

chmod 700 "$work"
ssh-keygen -q -t ed25519 -N '' -C serve-idle -f "$work/id"
lim=$((max + 4))
for k in "${!bins[@]}"; do
	mkdir -m 700 "$work/$k"
	cp "$work/id.pub" "$work/$k/authorized_keys"
	chmod 600 "$work/$k/authorized_keys"
	ports[k]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"${bins[$k]}" serve --demo --listen "127.0.0.1:${ports[$k]}" --authorized-keys "$work/$k/authorized_keys" \
		--host-key "$work/$k/host_key" --log "$work/$k/serve.log" --idle-timeout 0 \
		--max-sessions "$lim" --max-viewer-sessions "$lim" --max-sessions-per-key "$lim" \
		>"$work/$k/serve.out" 2>&1 &
	spids[k]=$!
done
for k in "${!bins[@]}"; do
	end=$((SECONDS + 30))
	until grep -q 'msg=listening' "$work/$k/serve.log" 2>/dev/null; do
		[[ -d /proc/${spids[$k]} ]] || {
			cat "$work/$k/serve.out" "$work/$k/serve.log" >&2 2>/dev/null
			die "${bins[$k]} serve --demo exited"
		}
		((SECONDS < end)) || die "${bins[$k]} serve did not listen within 30 s: $(cat "$work/$k/serve.out")"
		sleep 0.2
	done
done

sshcmd() {
	echo "ssh -F /dev/null -i '$work/id' -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -tt -p ${ports[$1]} viewer@127.0.0.1"
}
# A session with no window yet: tmux needs one to start its server, a
# shell that waits (not measured, and killed with the server).
tm new-session -d -s v -n idle -x "$cols" -y "$rows" "sleep 100000"
shows() { tm capture-pane -p -t "v:$1-$2" 2>/dev/null | grep -q 'Devices ('; }
open=0
# open_to N: sessions 1..N of every server, a batch at a time, each
# showing the console.
open_to() {
	while ((open < $1)); do
		local from=$((open + 1)) to=$((open + batch)) k i
		((to > $1)) && to=$1
		for ((i = from; i <= to; i++)); do
			for k in "${!bins[@]}"; do
				tm new-window -d -t v -n "$k-$i" "exec $(sshcmd "$k") 2>'$work/$k/ssh$i.err'"
			done
		done
		for ((i = from; i <= to; i++)); do
			for k in "${!bins[@]}"; do
				local end=$((SECONDS + 60))
				until shows "$k" "$i"; do
					if ((SECONDS >= end)); then
						tm capture-pane -p -t "v:$k-$i" >&2 2>/dev/null || true
						cat "$work/$k/ssh$i.err" "$work/$k/serve.log" >&2 2>/dev/null
						die "session $i of ${names[$k]} does not show the console after 60 s"
					fi
					sleep 0.2
				done
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
# median of the numbers on stdin (the mean of the middle two for an even count).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
tsrv=$(tm display -p -t v '#{pid}')

for k in "${!bins[@]}"; do
	echo "${names[$k]}: ${bins[$k]} $("${bins[$k]}" version | head -1), serve --demo on 127.0.0.1:${ports[$k]}"
done
echo "viewers ${cols}x$rows, $windows windows of ${window}s, settle ${settle}s, $(nproc) CPUs"
declare -A base
for n in $counts; do
	open_to "$n"
	if ((n == 0)); then sleep "$settle0"; else sleep "$settle"; fi
	load=$(cut -d' ' -f1 /proc/loadavg)
	ca=$(clients) ta=$(ticks "$tsrv") c0=$(date +%s.%N)
	declare -A pcs=()
	for ((w = 1; w <= windows; w++)); do
		declare -A a=()
		for k in "${!bins[@]}"; do a[$k]=$(ticks "${spids[$k]}"); done
		t0=$(date +%s.%N)
		traced=""
		if ((w == 1)) && [[ -n ${PERF:-} ]]; then
			perf record -q -F 4999 -g -o "$PERF.$n" -t "$(ls "/proc/${spids[0]}/task" | paste -sd,)" -- sleep "$window" >/dev/null 2>&1 &
			perfpid=$!
		fi
		if ((w == 1)) && [[ -n ${STRACE:-} ]]; then
			timeout -s INT "$window" strace -c -f -o "$STRACE.$n" -p "${spids[0]}" >/dev/null 2>&1 &
			stracepid=$! traced=1
		fi
		sleep "$window"
		[[ -z ${perfpid:-} ]] || wait "$perfpid" || true
		[[ -z ${stracepid:-} ]] || wait "$stracepid" || true
		perfpid="" stracepid=""
		t1=$(date +%s.%N)
		for k in "${!bins[@]}"; do
			[[ -d /proc/${spids[$k]} ]] || die "${names[$k]} exited during a window of $n sessions"
			[[ -n $traced && $k == 0 ]] && continue
			pcs[$k]+=" $(awk -v a="${a[$k]}" -v b="$(ticks "${spids[$k]}")" -v t0="$t0" -v t1="$t1" -v hz="$hz" 'BEGIN { printf "%.4f", 100 * (b - a) / hz / (t1 - t0) }')"
		done
	done
	cb=$(clients) tb=$(ticks "$tsrv") c1=$(date +%s.%N)
	load="$load-$(cut -d' ' -f1 /proc/loadavg)"
	for k in "${!bins[@]}"; do
		for ((i = 1; i <= n; i++)); do
			shows "$k" "$i" || die "session $i of ${names[$k]} no longer shows the console at the end of the windows of $n sessions"
		done
		live=$(grep -c 'msg=connect' "$work/$k/serve.log" || true)
		gone=$(grep -c 'msg=disconnect' "$work/$k/serve.log" || true)
		((live - gone == n)) || die "${names[$k]} logged $live connects and $gone disconnects, want $n open sessions"
		c=$(tr ' ' '\n' <<<"${pcs[$k]}" | grep . | median)
		range=$(tr ' ' '\n' <<<"${pcs[$k]}" | grep . | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f-%.3f", lo, hi }')
		((n == 0)) && base[$k]=$c
		per="-"
		if ((n > 0)) && [[ -n ${base[$k]:-} ]]; then
			per=$(awk -v c="$c" -v b="${base[$k]}" -v n="$n" 'BEGIN { printf "%.4f %%", (c - b) / n }')
		fi
		awk -v name="${names[$k]}" -v n="$n" -v c="$c" -v range="$range" -v per="$per" -v rss="$(status "${spids[$k]}" VmRSS)" \
			-v th="$(status "${spids[$k]}" Threads)" -v load="$load" 'BEGIN {
			printf "%-4s %2d sessions: server %7.3f %% of a core (windows %s)  per session %s  RSS %6.1f MB  %3d threads | load %s\n",
				name, n, c, range, per, rss / 1024, th, load
		}'
	done
	awk -v ca="$ca" -v cb="$cb" -v ta="$ta" -v tb="$tb" -v t0="$c0" -v t1="$c1" -v hz="$hz" 'BEGIN {
		w = t1 - t0
		printf "     (ssh clients %.3f %%, tmux %.3f %% of a core, all servers'"'"' sessions)\n", 100 * (cb - ca) / hz / w, 100 * (tb - ta) / hz / w
	}'
done
[[ -n ${base[0]:-} ]] || echo "(no 0 in COUNTS: no baseline, so no per-session figure)"
