#!/usr/bin/env bash
# Idle CPU of the console on four idle fake H100s through the real cgo NVML
# path: the tests' fake libnvidia-ml.so.1 (internal/fakenvml) loaded by the
# real binary. The console runs in a detached tmux session (160x48); after
# SETTLE seconds utime + stime of the fgtop process are read from
# /proc/PID/stat before and after a WINDOW and reported as % of one core.
#
#   bash bench/idlecpu-fakenvml.sh                        # builds ./cmd/fgtop
#   FGTOP_BIN=/tmp/fgtop WINDOW=25 SETTLE=8 bash bench/idlecpu-fakenvml.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local LC_ALL=C.UTF-8
window=${WINDOW:-25}
settle=${SETTLE:-8}
work=$(mktemp -d)
sock="fgtop-idle-nvml-$$"
tm() { tmux -u -L "$sock" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null || true; rm -rf "$work"' EXIT

bin=${FGTOP_BIN:-$work/fgtop}
[[ -n ${FGTOP_BIN:-} ]] || CGO_ENABLED=1 go build -o "$bin" ./cmd/fgtop
go run ./internal/fakenvml/buildfake "$work/lib" >/dev/null
printf '[[gpu]]\nuuid = "GPU-%s"\n' 5a1c3e2f-7b9d-4e1a-8c3b-0000000000a{0,1,2,3} >"$work/gpus.toml"
mkdir "$work/scratch"
tm new-session -d -s c -x 160 -y 48 \
	"exec env LD_LIBRARY_PATH='$work/lib' FAKE_NVML_CONFIG='$work/gpus.toml' TERM=tmux-256color '$bin' --devices nvml --scratch-root '$work/scratch' 2>'$work/stderr'"
pid=$(tm display -p -t c '#{pane_pid}')
sleep "$settle"
tm capture-pane -p -t c | grep -q 'GPU3 ' || {
	echo "the console does not show four GPUs:" >&2
	tm capture-pane -p -t c >&2
	cat "$work/stderr" >&2
	exit 1
}
a=$(awk '{print $14 + $15}' "/proc/$pid/stat")
sleep "$window"
b=$(awk '{print $14 + $15}' "/proc/$pid/stat")
python3 -c "import os,sys; print('console at rest, 4 fake GPUs: %.2f %% of a core over %ss' % ((int(sys.argv[2])-int(sys.argv[1]))/os.sysconf('SC_CLK_TCK')/int(sys.argv[3])*100, sys.argv[3]))" "$a" "$b" "$window"
