#!/usr/bin/env bash
# Idle CPU of the console beside nvtop 3.0.1, on the same four idle fake
# H100s, in the same windows (issue 29: fgtop's CPU at rest ≤ nvtop's).
#
# Both real binaries load the tests' fake libnvidia-ml.so.1
# (internal/fakenvml, built here with `go run ./internal/fakenvml/buildfake`)
# through LD_LIBRARY_PATH, with the same FAKE_NVML_CONFIG: four H100s,
# nothing running on them. With a free NVML what is measured is each
# program's own work at rest: its poll, its redraw, its runtime.
#
# nvtop 3.0.1 comes from Debian bookworm's contrib component, fetched
# without touching the system's apt configuration: a private sources list,
# lists and cache directories (apt-get -o Dir::Etc::SourceList=... update;
# apt-get download nvtop), unpacked with dpkg -x and checked to be 3.0.1.
# It is kept under $CACHE (default ~/.cache/fgtop-bench/nvtop-3.0.1), so a
# rerun needs no network. NVTOP_BIN=/path/to/nvtop skips the fetch (the
# version is still checked); NVTOP_FETCH=0 forbids it (exit 2 when nvtop
# is not cached).
#
# Each program runs in a detached tmux server of its own (so each
# terminal's cost can be told apart too) at COLSxROWS, with
# XDG_CONFIG_HOME pointing at an empty directory so no user config
# changes what either draws. fgtop runs as in the issue's measurement:
# --devices nvml --history off on an empty scratch root (FGTOP_ARGS
# replaces those flags). Both screens are checked before and after the
# windows: fgtop must show GPU3's row, nvtop "Device 3 [NVIDIA H100".
#
# After SETTLE seconds (8 by default: the console's history graphs still
# fill then, a column every few seconds, each composed; SETTLE=370 waits
# past their 360 s and measures the console as it is left open),
# ROUNDS windows of WINDOW seconds follow one another; each window reads every process at its start and at its end,
# so all see the same load. Per window and program it prints:
#   - utime+stime from /proc/PID/stat (1/CLK_TCK resolution) as % of a core,
#   - the same from /proc/PID/task/*/schedstat (nanoseconds, live threads
#     only: finer, as nvtop's figure is a few ticks per window),
#   - its wake-ups a second (voluntary context switches of its threads),
#   - the ratio of each other program to nvtop from both (inf when nvtop
#     used none),
#   - VmRSS and Threads from /proc/PID/status at the window's end,
#   - each tmux server's CPU (the terminal parsing what the program drew),
#   - the load average at the window's start.
#
#   bash bench/idle-vs-nvtop.sh                         # builds ./cmd/fgtop, 160x48
#   FGTOP_BIN=/tmp/fgtop WINDOW=30 ROUNDS=2 bash bench/idle-vs-nvtop.sh
#   SIZES="80x24 160x48 240x70" bash bench/idle-vs-nvtop.sh   # one run per size
#   COLS=240 ROWS=70 bash bench/idle-vs-nvtop.sh
#
# GOFLOOR=1 adds a third program in a tmux of its own: bench/gofloor, a Go
# program that only ticks once a second and writes one changing line (the
# floor any Go program at rest pays); GOFLOOR_ENV (e.g. "GOMAXPROCS=1"
# or "GODEBUG=...") is set in its environment. FGTOP_ENV is set in
# fgtop's. FGTOP_BIN2=/path adds a second fgtop (FGTOP2_ENV for its
# environment), so two trees, or one binary under two settings, are read
# in the same windows.
#
# SPANS=1 adds one more window per size under `perf record -a -e
# sched:sched_switch` and prints, per program, its on-CPU time, wake-ups
# and bursts of work a second with the bursts' span, and per thread
# (bench/restspan.py; needs perf and the right to trace the scheduler).
#
# NVML=system GPUS=N uses the NVML library the environment loads (a real
# node's driver; bench/gpu-check.sh runs it so) instead of the fake, and
# checks for N GPUs.
#
# It fails (exit 1) when either program does not start, does not show the
# GPUs, or exits during a window; exit 2 when nvtop cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local LC_ALL=C.UTF-8

window=${WINDOW:-30}
rounds=${ROUNDS:-2}
settle=${SETTLE:-8}
sizes=${SIZES:-${COLS:-160}x${ROWS:-48}}
cache=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fgtop-bench/nvtop-3.0.1}
nvtop_version=3.0.1

work=$(mktemp -d)
sockf="fgtop-vs-nvtop-f-$$" sockn="fgtop-vs-nvtop-n-$$"
tf() { tmux -u -L "$sockf" -f /dev/null "$@"; }
tn() { tmux -u -L "$sockn" -f /dev/null "$@"; }
t2() { tmux -u -L "fgtop-vs-nvtop-2-$$" -f /dev/null "$@"; }
tg() { tmux -u -L "fgtop-vs-nvtop-g-$$" -f /dev/null "$@"; }
cleanup() {
	set +e
	tf kill-server 2>/dev/null
	tn kill-server 2>/dev/null
	t2 kill-server 2>/dev/null
	tg kill-server 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
die() {
	echo "idle-vs-nvtop: $*" >&2
	exit 1
}

# fetch_nvtop: nvtop 3.0.1 from Debian contrib into $cache, once.
fetch_nvtop() {
	local bin="$cache/usr/bin/nvtop"
	if [[ -x $bin ]]; then
		echo "$bin"
		return
	fi
	if [[ ${NVTOP_FETCH:-1} == 0 ]]; then
		echo "idle-vs-nvtop: nvtop $nvtop_version is not in $cache and NVTOP_FETCH=0 (set NVTOP_BIN, or let it fetch)" >&2
		exit 2
	fi
	command -v apt-get >/dev/null && command -v dpkg >/dev/null || {
		echo "idle-vs-nvtop: apt-get and dpkg are needed to fetch nvtop $nvtop_version (or set NVTOP_BIN)" >&2
		exit 2
	}
	local apt="$work/apt"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d" "$apt/preferences.d" "$apt/dl"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm contrib" >"$apt/sources.list"
	local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/sources.list.d"
		-o "Dir::Etc::PreferencesParts=$apt/preferences.d" -o "Dir::Etc::Preferences=$apt/preferences"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Debug::NoLocking=1"
		-o "APT::Sandbox::User=$(id -un)")
	apt-get "${opts[@]}" -qq update >"$apt/update.log" 2>&1 || {
		cat "$apt/update.log" >&2
		echo "idle-vs-nvtop: apt-get update of Debian bookworm contrib failed (no network? set NVTOP_BIN)" >&2
		exit 2
	}
	(cd "$apt/dl" && apt-get "${opts[@]}" -qq download "nvtop=$nvtop_version-1") >"$apt/download.log" 2>&1 || {
		cat "$apt/download.log" >&2
		echo "idle-vs-nvtop: apt-get download nvtop=$nvtop_version-1 failed (set NVTOP_BIN)" >&2
		exit 2
	}
	local deb
	deb=$(ls "$apt/dl"/nvtop_*.deb)
	local v
	v=$(dpkg-deb -f "$deb" Version)
	[[ $v == "$nvtop_version"-* ]] || {
		echo "idle-vs-nvtop: Debian's nvtop is $v, not $nvtop_version" >&2
		exit 2
	}
	mkdir -p "$cache.tmp"
	dpkg -x "$deb" "$cache.tmp"
	cp "$deb" "$cache.tmp/"
	rm -rf "$cache"
	mv "$cache.tmp" "$cache"
	echo "$bin"
}

nvtop=${NVTOP_BIN:-}
if [[ -z $nvtop ]]; then nvtop=$(fetch_nvtop) || exit 2; fi
got=$("$nvtop" --version 2>&1) || die "$nvtop --version failed: $got"
[[ $got == "nvtop version $nvtop_version" ]] || die "$nvtop is '$got', want nvtop version $nvtop_version"

bin=${FGTOP_BIN:-$work/fgtop}
[[ -n ${FGTOP_BIN:-} ]] || CGO_ENABLED=1 go build -o "$bin" ./cmd/fgtop
mkdir -p "$work/scratch" "$work/xdg"
# shellcheck disable=SC2206 # FGTOP_ARGS is a list of flags, split on blanks
fargs=(${FGTOP_ARGS:---devices nvml --history off --scratch-root $work/scratch})
envs="XDG_CONFIG_HOME='$work/xdg' TERM=tmux-256color"
case ${NVML:-fake} in
fake)
	go run ./internal/fakenvml/buildfake "$work/lib" >/dev/null
	printf '[[gpu]]\nuuid = "GPU-%s"\n' 5a1c3e2f-7b9d-4e1a-8c3b-0000000000a{0,1,2,3} >"$work/gpus.toml"
	envs+=" LD_LIBRARY_PATH='$work/lib' FAKE_NVML_CONFIG='$work/gpus.toml'"
	ngpu=4 what="four idle fake H100s"
	;;
system)
	ngpu=${GPUS:?NVML=system needs GPUS=<the number of GPUs the node has>}
	what="the node's $ngpu GPU(s) through the NVML library this environment loads"
	;;
*) die "NVML=${NVML}: want fake or system" ;;
esac
last=$((ngpu - 1))

hz=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# nanos PID: CPU of the live threads in ns (schedstat's first field).
nanos() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }
status() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

fgtop_shows() { tf capture-pane -p -t c | grep -q "^. GPU$last "; }
nvtop_shows() { tn capture-pane -p -t n | grep -q "Device $last \\["; }
fgtop2_shows() { t2 capture-pane -p -t c | grep -q "^. GPU$last "; }
gofloor_shows() { tg capture-pane -p -t g | grep -q "gofloor tick"; }
# wakes PID: voluntary context switches of its live threads.
wakes() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '$1 == "voluntary_ctxt_switches:" { s += $2 } END { printf "%d", s }'; }

# The programs measured, in the order printed: name, tmux function, check.
progs=(fgtop nvtop)
if [[ -n ${FGTOP_BIN2:-} ]]; then progs+=(fgtop2); fi
if [[ ${GOFLOOR:-0} == 1 ]]; then
	progs+=(gofloor)
	gofloor=${GOFLOOR_BIN:-$work/gofloor}
	[[ -n ${GOFLOOR_BIN:-} ]] || go build -o "$gofloor" ./bench/gofloor
fi

echo "nvtop: $nvtop ($got)"
echo "fgtop: $bin $("$bin" version | head -1)${FGTOP_ENV:+ with $FGTOP_ENV}"
[[ -z ${FGTOP_BIN2:-} ]] || echo "fgtop2: $FGTOP_BIN2 $("$FGTOP_BIN2" version | head -1)${FGTOP2_ENV:+ with $FGTOP2_ENV}"
[[ ${GOFLOOR:-0} != 1 ]] || echo "gofloor: $gofloor${GOFLOOR_ENV:+ with $GOFLOOR_ENV}"
echo "fgtop flags: ${fargs[*]}"
echo "machine: $(nproc) CPUs; window ${window}s x $rounds, settle ${settle}s"

for size in $sizes; do
	cols=${size%x*} rows=${size#*x}
	[[ $cols =~ ^[0-9]+$ && $rows =~ ^[0-9]+$ ]] || die "size '$size': want COLSxROWS"
	tf new-session -d -s c -x "$cols" -y "$rows" "exec env $envs ${FGTOP_ENV:-} '$bin' ${fargs[*]} 2>'$work/fgtop.err'"
	tn new-session -d -s n -x "$cols" -y "$rows" "exec env $envs '$nvtop' 2>'$work/nvtop.err'"
	declare -A pid=() srv=()
	pid[fgtop]=$(tf display -p -t c '#{pane_pid}') srv[fgtop]=$(tf display -p -t c '#{pid}')
	pid[nvtop]=$(tn display -p -t n '#{pane_pid}') srv[nvtop]=$(tn display -p -t n '#{pid}')
	if [[ -n ${FGTOP_BIN2:-} ]]; then
		mkdir -p "$work/scratch2"
		# shellcheck disable=SC2206
		fargs2=(${FGTOP_ARGS:---devices nvml --history off --scratch-root $work/scratch2})
		t2 new-session -d -s c -x "$cols" -y "$rows" "exec env $envs ${FGTOP2_ENV:-} '$FGTOP_BIN2' ${fargs2[*]} 2>'$work/fgtop2.err'"
		pid[fgtop2]=$(t2 display -p -t c '#{pane_pid}') srv[fgtop2]=$(t2 display -p -t c '#{pid}')
	fi
	if [[ ${GOFLOOR:-0} == 1 ]]; then
		tg new-session -d -s g -x "$cols" -y "$rows" "exec env TERM=tmux-256color ${GOFLOOR_ENV:-} '$gofloor' 2>'$work/gofloor.err'"
		pid[gofloor]=$(tg display -p -t g '#{pane_pid}') srv[gofloor]=$(tg display -p -t g '#{pid}')
	fi
	end=$((SECONDS + 60))
	for p in "${progs[@]}"; do
		until "${p}_shows"; do
			if ((SECONDS >= end)); then
				for f in "$work"/*.err; do echo "--- $f:" >&2; cat "$f" >&2; done
				die "at ${cols}x$rows $p does not show what it should within 60 s (fgtop: GPU$last; nvtop: Device $last; gofloor: its tick)"
			fi
			sleep 0.2
		done
	done
	sleep "$settle"
	echo
	echo "== ${cols}x$rows: $what; $(for p in "${progs[@]}"; do printf '%s pid %s ' "$p" "${pid[$p]}"; done)"
	for ((r = 1; r <= rounds; r++)); do
		load=$(cut -d' ' -f1-3 /proc/loadavg)
		declare -A a=() an=() aw=() as=()
		t0=$(date +%s.%N)
		for p in "${progs[@]}"; do
			a[$p]=$(ticks "${pid[$p]}") an[$p]=$(nanos "${pid[$p]}") aw[$p]=$(wakes "${pid[$p]}") as[$p]=$(ticks "${srv[$p]}")
		done
		sleep "$window"
		t1=$(date +%s.%N)
		printf 'round %d, %.1f s, load average %s\n' "$r" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$load"
		declare -A share=() sshare=()
		for p in "${progs[@]}"; do
			[[ -d /proc/${pid[$p]} ]] || die "$p exited during window $r"
			b=$(ticks "${pid[$p]}") bn=$(nanos "${pid[$p]}") bw=$(wakes "${pid[$p]}") bs=$(ticks "${srv[$p]}")
			rss=$(status "${pid[$p]}" VmRSS) th=$(status "${pid[$p]}" Threads)
			line=$(awk -v p="$p" -v t0="$t0" -v t1="$t1" -v hz="$hz" -v a="${a[$p]}" -v b="$b" -v an="${an[$p]}" -v bn="$bn" \
				-v aw="${aw[$p]}" -v bw="$bw" -v as="${as[$p]}" -v bs="$bs" -v rss="$rss" -v th="$th" 'BEGIN {
				w = t1 - t0
				printf "%.6f %.6f   %-7s %6.3f %% of a core (%d ticks)  %6.3f %% (schedstat)  %5.1f wake-ups/s  RSS %6.1f MB  %2d threads  its tmux %.3f %%\n",
					100 * (b - a) / hz / w, 100 * (bn - an) / 1e9 / w, p, 100 * (b - a) / hz / w, b - a, 100 * (bn - an) / 1e9 / w, (bw - aw) / w, rss / 1024, th, 100 * (bs - as) / hz / w
			}')
			read -r share[$p] sshare[$p] rest <<<"$line"
			echo "${line#* * }"
		done
		for p in "${progs[@]}"; do
			[[ $p != nvtop ]] || continue
			awk -v p="$p" -v f="${share[$p]}" -v n="${share[nvtop]}" -v fs="${sshare[$p]}" -v ns="${sshare[nvtop]}" 'BEGIN {
				printf "  ratio %s/nvtop: %s (ticks)  %s (schedstat)\n", p, (n > 0 ? sprintf("%.2f", f / n) : "inf"), (ns > 0 ? sprintf("%.2f", fs / ns) : "inf")
			}'
		done
	done
	if [[ ${SPANS:-0} == 1 ]]; then
		# The scheduler's record of one more window: each program's
		# bursts of work and its threads' wake-ups (bench/restspan.py).
		perf record -q -a -e sched:sched_switch -o "$work/sched.data" -- sleep "$window" >"$work/perf.log" 2>&1 ||
			die "perf record failed (SPANS=1 needs perf and the right to trace the scheduler): $(cat "$work/perf.log")"
		echo "bursts at rest, ${window} s of sched_switch records (load average $(cut -d' ' -f1-3 /proc/loadavg)):"
		# shellcheck disable=SC2046 # one NAME=PID argument a program
		perf script -i "$work/sched.data" 2>/dev/null |
			python3 bench/restspan.py $(for p in "${progs[@]}"; do printf '%s=%s ' "$p" "${pid[$p]}"; done)
	fi
	for p in "${progs[@]}"; do "${p}_shows" || die "$p no longer shows what it should at the end"; done
	tf kill-server
	tn kill-server
	[[ -z ${FGTOP_BIN2:-} ]] || t2 kill-server
	[[ ${GOFLOOR:-0} != 1 ]] || tg kill-server
	sleep 0.5
done
