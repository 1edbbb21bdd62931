#!/usr/bin/env bash
# Smoke test of the real binary in a real terminal: `fgtop demo` in a
# detached tmux session, driven with send-keys and read with capture-pane,
# as a person would use it. Three runs:
#   1. default colours at 120x40: share bars appear, j/k move the device
#      cursor, Tab moves the focus away from the devices, ? opens the help,
#      Esc closes it, a resize to 80x24 redraws the compact layout with no
#      line wider than 80 columns, q exits with status 0;
#   2. NO_COLOR=1: no colour escape reaches the terminal, q exits 0;
#   3. --readonly: the read-only mark is shown, e does nothing, the help
#      lists no e key, q exits 0.
# Every wait polls the pane (generous limits: CI machines are loaded); any
# failure prints the pane and the demo's stderr and exits 1.
#
#   bash .ci/smoke-tmux.sh            # builds ./cmd/fgtop
#   FGTOP_BIN=/path/fgtop bash .ci/smoke-tmux.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local
# The patterns below match bar glyphs; they need a UTF-8 locale (Debian
# always has C.UTF-8), whatever the caller's is.
export LC_ALL=C.UTF-8

work=$(mktemp -d)
sock="fgtop-smoke-$$"
# -u: the panes hold UTF-8 (bars, arrows) whatever the locale; -f /dev/null:
# no user configuration.
tm() { tmux -u -L "$sock" -f /dev/null "$@"; }
cleanup() {
	tm kill-server 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

if [[ -n "${FGTOP_BIN:-}" ]]; then
	cp "$FGTOP_BIN" "$work/fgtop"
else
	go build -o "$work/fgtop" ./cmd/fgtop
fi

run=""        # the name of the current run, for messages
limit="${SMOKE_TIMEOUT:-60}" # seconds for any one wait

pane() { tm capture-pane -p -t smoke 2>/dev/null || true; }

fail() {
	echo "FAIL [$run]: $*" >&2
	echo "---- pane ----" >&2
	pane >&2
	echo "---- stderr of fgtop ----" >&2
	cat "$work/stderr" >&2 2>/dev/null || true
	echo "--------------" >&2
	exit 1
}

# wait_for RE [WHAT]: poll until a line of the pane matches RE (ERE).
wait_for() {
	local re=$1 what=${2:-"/$1/ on screen"} end=$((SECONDS + limit))
	while ((SECONDS < end)); do
		pane | grep -Eq -- "$re" && return 0
		sleep 0.1
	done
	fail "timed out after ${limit}s waiting for $what"
}

# wait_gone RE [WHAT]: poll until no line of the pane matches RE.
wait_gone() {
	local re=$1 what=${2:-"/$1/ to go"} end=$((SECONDS + limit))
	while ((SECONDS < end)); do
		pane | grep -Eq -- "$re" || return 0
		sleep 0.1
	done
	fail "timed out after ${limit}s waiting for $what"
}

# start NAME COLS ROWS ENV ARGS...: run fgtop demo in a fresh session; its
# exit status lands in $work/exit once it ends.
start() {
	run=$1
	local cols=$2 rows=$3 envs=$4
	shift 4
	echo "== smoke [$run] ${cols}x$rows fgtop demo $*"
	rm -f "$work/exit" "$work/stderr"
	tm kill-server 2>/dev/null || true
	tm new-session -d -s smoke -x "$cols" -y "$rows" \
		"cd '$work' && env TERM=tmux-256color $envs ./fgtop demo $* 2>stderr; echo EXIT=\$? >exit"
	# Share bars: a device row with a bar and its held/capacity figure.
	wait_for '^[▶ ] GPU[0-9] +[█░]+ +[0-9.]+/1\.00' "share bars"
}

# quit: q, then the process must end with status 0.
quit() {
	tm send-keys -t smoke q
	local end=$((SECONDS + limit))
	while ((SECONDS < end)); do
		if [[ -s "$work/exit" ]]; then
			grep -qx 'EXIT=0' "$work/exit" || fail "q: fgtop ended with $(cat "$work/exit")"
			return 0
		fi
		sleep 0.1
	done
	fail "q: fgtop still running after ${limit}s"
}

# ---------------------------------------------------------------- run 1
start colour 120 40 ""
# The cursor starts on the device that most needs attention (or the
# busiest), which the demo decides; g takes it to the first device.
wait_for '^[▶ ] GPU0 ' "the devices listed"
tm send-keys -t smoke g
wait_for '^▶ GPU0 ' "g to put the device cursor on GPU0"
tm send-keys -t smoke j
wait_for '^▶ GPU1 ' "j to move the device cursor to GPU1"
tm send-keys -t smoke k
wait_for '^▶ GPU0 ' "k to move the device cursor back to GPU0"
# Tab takes the focus to another pane: j must then leave the devices alone.
tm send-keys -t smoke Tab
tm send-keys -t smoke j
sleep 0.5 # a wrong move would show within a frame or two
pane | grep -Eq '^▶ GPU0 ' || fail "after Tab, j still moved the device cursor"
tm send-keys -t smoke BTab
tm send-keys -t smoke j
wait_for '^▶ GPU1 ' "shift+Tab back to the devices, then j to GPU1"

tm send-keys -t smoke '?'
wait_for 'Share bars' "the help (? key)"
wait_for 'role: operator' "the operator role in the help"
tm send-keys -t smoke Escape
wait_gone 'Share bars' "Esc to close the help"
wait_for '^─ Devices \([0-9]+\)' "the main screen after Esc"

tm resize-window -t smoke -x 80 -y 24
# At 120 columns a bar is 40 cells; tmux only clips the old frame, so a
# shorter bar next to its figure means the console redrew for 80 columns.
wait_for '^[▶ ] GPU0 +[█░]{5,30} +[0-9.]+/1\.00' "the bars redrawn for 80 columns"
wait_for '^─ Kernels.* Agents \([0-9]+\) +Issues \([0-9]+\)' "the compact layout's tab line"
lines=$(tm capture-pane -p -J -t smoke)
[[ $(wc -l <<<"$lines") -eq 24 ]] || fail "80x24: the pane has $(wc -l <<<"$lines") lines"
# -J joins lines the terminal wrapped, so a line drawn wider than the
# window shows up here as one long line.
wide=$(perl -CSD -ne 'chomp; s/\s+$//; print "$.: ", length, "\n" if length > 80' <<<"$lines")
[[ -z "$wide" ]] || fail "80x24: lines wider than 80 columns (line: width): $wide"
head -n 1 <<<"$lines" | grep -q '^fgtop ' || fail "80x24: the header is not on the first line"
quit

# ---------------------------------------------------------------- run 2
start no-color 120 40 "NO_COLOR=1"
sleep 0.5
colour=$(tm capture-pane -e -p -t smoke | grep -cE $'\e\\[([0-9;]*;)?(3[0-7]|4[0-7]|9[0-7]|10[0-7]|38|48)(;[0-9;]*)?m' || true)
((colour == 0)) || fail "NO_COLOR=1: $colour lines carry colour escapes"
quit

# ---------------------------------------------------------------- run 3
start readonly 120 40 "" --readonly
wait_for 'read-only' "the read-only mark in the header"
pane | grep -qi 'edit partition' && fail "read-only: the key hints offer e (edit partition)"
before=$(pane | sed -n 3,11p | cut -c1-10)
tm send-keys -t smoke e
sleep 1 # nothing is supposed to happen: give a wrong reaction time to show
pane | grep -Eq '^─ Devices \([0-9]+\)' || fail "read-only: e left the main screen"
pane | grep -qi 'partition' && fail "read-only: e opened something about partitions"
[[ $(pane | sed -n 3,11p | cut -c1-10) == "$before" ]] || fail "read-only: e changed the device list"
tm send-keys -t smoke '?'
wait_for 'Share bars' "the help (? key)"
wait_for 'read-only' "the read-only note in the help"
help=$(pane)
grep -Eq '(^|  )e +[a-z]' <<<"$help" && fail "read-only: the help lists an e key"
grep -Eqi 'edit (the )?partition' <<<"$help" && fail "read-only: the help offers partition editing"
tm send-keys -t smoke Escape
wait_gone 'Share bars' "Esc to close the help"
quit

echo "smoke-tmux: 3 runs passed"
