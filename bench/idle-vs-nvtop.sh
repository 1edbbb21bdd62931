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
# After SETTLE seconds, ROUNDS windows of WINDOW seconds follow one
# another; each window reads both processes at its start and at its end,
# so both see the same load. Per window and program it prints:
#   - utime+stime from /proc/PID/stat (1/CLK_TCK resolution) as % of a core,
#   - the same from /proc/PID/task/*/schedstat (nanoseconds, live threads
#     only: finer, as nvtop's figure is a few ticks per window),
#   - the ratio fgtop/nvtop from each (inf when nvtop used none),
#   - VmRSS and Threads from /proc/PID/status at the window's end,
#   - each tmux server's CPU (the terminal parsing what the program drew),
#   - the load average at the window's start.
#
#   bash bench/idle-vs-nvtop.sh                         # builds ./cmd/fgtop, 160x48
#   FGTOP_BIN=/tmp/fgtop WINDOW=30 ROUNDS=2 bash bench/idle-vs-nvtop.sh
#   SIZES="80x24 160x48 240x70" bash bench/idle-vs-nvtop.sh   # one run per size
#   COLS=240 ROWS=70 bash bench/idle-vs-nvtop.sh
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
cleanup() {
	set +e
	tf kill-server 2>/dev/null
	tn kill-server 2>/dev/null
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

echo "nvtop: $nvtop ($got)"
echo "fgtop: $bin $("$bin" version | head -1)"
echo "fgtop flags: ${fargs[*]}"
echo "machine: $(nproc) CPUs; window ${window}s x $rounds, settle ${settle}s"

for size in $sizes; do
	cols=${size%x*} rows=${size#*x}
	[[ $cols =~ ^[0-9]+$ && $rows =~ ^[0-9]+$ ]] || die "size '$size': want COLSxROWS"
	tf new-session -d -s c -x "$cols" -y "$rows" "exec env $envs '$bin' ${fargs[*]} 2>'$work/fgtop.err'"
	tn new-session -d -s n -x "$cols" -y "$rows" "exec env $envs '$nvtop' 2>'$work/nvtop.err'"
	fpid=$(tf display -p -t c '#{pane_pid}') fsrv=$(tf display -p -t c '#{pid}')
	npid=$(tn display -p -t n '#{pane_pid}') nsrv=$(tn display -p -t n '#{pid}')
	end=$((SECONDS + 60))
	until fgtop_shows && nvtop_shows; do
		if ((SECONDS >= end)); then
			echo "--- fgtop's screen:" >&2
			tf capture-pane -p -t c >&2 || true
			cat "$work/fgtop.err" >&2
			echo "--- nvtop's screen:" >&2
			tn capture-pane -p -t n >&2 || true
			cat "$work/nvtop.err" >&2
			die "at ${cols}x$rows both programs must show $ngpu GPUs (GPU$last; Device $last) within 60 s"
		fi
		sleep 0.2
	done
	sleep "$settle"
	echo
	echo "== ${cols}x$rows: $what; fgtop pid $fpid, nvtop pid $npid"
	for ((r = 1; r <= rounds; r++)); do
		load=$(cut -d' ' -f1-3 /proc/loadavg)
		t0=$(date +%s.%N)
		fa=$(ticks "$fpid") fna=$(nanos "$fpid") na=$(ticks "$npid") nna=$(nanos "$npid")
		sfa=$(ticks "$fsrv") sna=$(ticks "$nsrv")
		sleep "$window"
		t1=$(date +%s.%N)
		fb=$(ticks "$fpid") fnb=$(nanos "$fpid") nb=$(ticks "$npid") nnb=$(nanos "$npid")
		sfb=$(ticks "$fsrv") snb=$(ticks "$nsrv")
		[[ -d /proc/$fpid && -d /proc/$npid ]] || die "a program exited during window $r"
		frss=$(status "$fpid" VmRSS) fth=$(status "$fpid" Threads)
		nrss=$(status "$npid" VmRSS) nth=$(status "$npid" Threads)
		awk -v r="$r" -v load="$load" -v t0="$t0" -v t1="$t1" -v hz="$hz" \
			-v fa="$fa" -v fb="$fb" -v fna="$fna" -v fnb="$fnb" -v na="$na" -v nb="$nb" -v nna="$nna" -v nnb="$nnb" \
			-v sfa="$sfa" -v sfb="$sfb" -v sna="$sna" -v snb="$snb" \
			-v frss="$frss" -v fth="$fth" -v nrss="$nrss" -v nth="$nth" 'BEGIN {
			w = t1 - t0
			f = 100 * (fb - fa) / hz / w; n = 100 * (nb - na) / hz / w
			fs = 100 * (fnb - fna) / 1e9 / w; ns = 100 * (nnb - nna) / 1e9 / w
			printf "round %d, %.1f s, load average %s\n", r, w, load
			printf "  fgtop  %6.3f %% of a core (%d ticks)  %6.3f %% (schedstat)  RSS %6.1f MB  %2d threads  its tmux %.3f %%\n", f, fb - fa, fs, frss / 1024, fth, 100 * (sfb - sfa) / hz / w
			printf "  nvtop  %6.3f %% of a core (%d ticks)  %6.3f %% (schedstat)  RSS %6.1f MB  %2d threads  its tmux %.3f %%\n", n, nb - na, ns, nrss / 1024, nth, 100 * (snb - sna) / hz / w
			printf "  ratio fgtop/nvtop: %s (ticks)  %s (schedstat)\n", (n > 0 ? sprintf("%.2f", f / n) : "inf"), (ns > 0 ? sprintf("%.2f", fs / ns) : "inf")
		}'
	done
	fgtop_shows || die "fgtop no longer shows GPU$last at the end"
	nvtop_shows || die "nvtop no longer shows Device $last at the end"
	tf kill-server
	tn kill-server
	sleep 0.5
done
