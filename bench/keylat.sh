#!/usr/bin/env bash
# A key press to its frame, in a pty (issue 29 target: ≤ 16 ms p99 at rest
# and under the demo's churn), with bench/keylat (see its doc comment for
# how a press and its frame are told apart and timed).
#
# Modes (MODES, default "rest churn"):
#   floor  a shell loop that prints the marker at once for each key
#          (-sync=false, a line is a frame), in a run of its own.
#   bigfloor  a program that answers each key with a full-screen frame of
#          about 14 KB (what the console writes when ? opens or closes its
#          help at 160x48) and the marker after it: the pty's own cost of
#          carrying such a frame, in a run of its own (needs python3).
#   rest   a quiet fake node: four idle fake H100s through the real cgo
#          NVML path (the tests' fake libnvidia-ml.so.1, internal/fakenvml),
#          an empty scratch root, --history off; nothing changes but the
#          once-a-second poll and the clock line.
#   churn  `fgtop demo`: simulated agents create and end kernels, telemetry
#          moves every second, the history pane records (its default).
# Each presses ? ROUNDS times (half open the help, half close it) in a
# COLSxROWS pty and prints p50/p90/p99/max from the press to the end of
# the frame that shows its effect, and to the first byte after it. rest
# and churn also press keylat's own echo program in a pty of its own,
# alternately with the console in the same run, and print its figures:
# the floor (the pty, keylat, the machine's load) under the same load.
# keylat reads each pty on a thread of its own and runs its threads at
# SCHED_FIFO where allowed (as root), so its own waits for a core stay
# out of the figures; KEYLAT_ARGS adds flags (-rt=false, -floor=false).
#   bash bench/keylat.sh                          # builds ./cmd/fgtop
#   FGTOP_BIN=/tmp/fgtop ROUNDS=200 MODES=churn COLS=80 ROWS=24 bash bench/keylat.sh
#
# keylat fails (exit 1) when the console does not start, a press gets no
# frame showing its effect within 5 s, or the console exits.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local LC_ALL=C.UTF-8

rounds=${ROUNDS:-200}
modes=${MODES:-rest churn}
cols=${COLS:-160}
rows=${ROWS:-48}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bin=${FGTOP_BIN:-$work/fgtop}
[[ -n ${FGTOP_BIN:-} ]] || CGO_ENABLED=1 go build -o "$bin" ./cmd/fgtop
go build -o "$work/keylat" ./bench/keylat
# shellcheck disable=SC2206 # KEYLAT_ARGS is a list of flags, split on blanks
kargs=(${KEYLAT_ARGS:-})
echo "fgtop: $bin $("$bin" version | head -1); $(nproc) CPUs"
for mode in $modes; do
	echo
	case $mode in
	floor)
		echo "== the floor: a shell loop answering each key at once"
		"$work/keylat" -sync=false -settle 200ms -rounds "$rounds" -cols "$cols" -rows "$rows" -- bash -c \
			'i=0; echo HELD/CAPACITY; while read -rsn1 _; do i=$((1 - i)); if ((i)); then echo shift+tab; else echo HELD/CAPACITY; fi; done'
		;;
	bigfloor)
		echo "== the floor of a full-screen frame: ~14 KB written for each key"
		"$work/keylat" -sync=false -settle 200ms -rounds "$rounds" -cols "$cols" -rows "$rows" -- python3 -c '
import os, tty
tty.setraw(0)
fill = ("\x1b[2;3H" + "x" * 150 + "\r\n") * 90
i = 0
os.write(1, b"HELD/CAPACITY\r\n")
while True:
    if not os.read(0, 1):
        break
    i = 1 - i
    os.write(1, (fill + ("shift+tab" if i else "HELD/CAPACITY") + "\r\n").encode())
'
		;;
	rest)
		go run ./internal/fakenvml/buildfake "$work/lib" >/dev/null
		printf '[[gpu]]\nuuid = "GPU-%s"\n' 5a1c3e2f-7b9d-4e1a-8c3b-0000000000a{0,1,2,3} >"$work/gpus.toml"
		mkdir -p "$work/scratch" "$work/xdg"
		echo "== at rest: four idle fake H100s, empty scratch root, --history off"
		XDG_CONFIG_HOME="$work/xdg" LD_LIBRARY_PATH="$work/lib" FAKE_NVML_CONFIG="$work/gpus.toml" \
			"$work/keylat" "${kargs[@]}" -rounds "$rounds" -cols "$cols" -rows "$rows" -- \
			"$bin" --devices nvml --history off --scratch-root "$work/scratch"
		;;
	churn)
		mkdir -p "$work/xdg"
		echo "== under churn: fgtop demo"
		XDG_CONFIG_HOME="$work/xdg" "$work/keylat" "${kargs[@]}" -rounds "$rounds" -cols "$cols" -rows "$rows" -- "$bin" demo
		;;
	*)
		echo "keylat.sh: mode '$mode': want floor, bigfloor, rest or churn" >&2
		exit 2
		;;
	esac
done
