#!/usr/bin/env bash
# Smoke test of `fgtop fleet` in a real terminal: three `fgtop serve --demo`
# processes on free loopback ports (generated host keys, an authorized_keys
# with one client key, a known_hosts listing the three), the fleet console
# in a detached tmux session at 120x40, driven with send-keys and read with
# capture-pane: the three nodes come live; :fit places a request; Enter
# opens a node's own console read-only and q comes back; one node killed
# turns STALE then UNREACHABLE and stays listed; a resize to 80x24 draws no
# line wider than 80; q exits 0.
#
#   bash .ci/smoke-fleet-tmux.sh      # builds ./cmd/fgtop
#   FGTOP_BIN=/path/fgtop bash .ci/smoke-fleet-tmux.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local LC_ALL=C.UTF-8

work=$(mktemp -d)
sock="fgtop-fleet-smoke-$$"
tm() { tmux -u -L "$sock" -f /dev/null "$@"; }
pids=()
cleanup() {
	tm kill-server 2>/dev/null || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

if [[ -n "${FGTOP_BIN:-}" ]]; then
	cp "$FGTOP_BIN" "$work/fgtop"
else
	go build -o "$work/fgtop" ./cmd/fgtop
fi
limit="${SMOKE_TIMEOUT:-60}"
pane() { tm capture-pane -p -t fleet 2>/dev/null || true; }
fail() {
	echo "FAIL: $*" >&2
	echo "---- pane ----" >&2
	pane >&2
	cat "$work/stderr" >&2 2>/dev/null || true
	exit 1
}
wait_for() {
	local re=$1 what=${2:-"/$1/ on screen"} end=$((SECONDS + limit))
	while ((SECONDS < end)); do
		pane | grep -Eq -- "$re" && return 0
		sleep 0.1
	done
	fail "timed out after ${limit}s waiting for $what"
}

ssh-keygen -q -t ed25519 -N '' -C fleet-smoke -f "$work/id"
cp "$work/id.pub" "$work/authorized_keys"
chmod 600 "$work/authorized_keys"
hosts=()
: >"$work/known_hosts"
for i in 1 2 3; do
	mkdir -p "$work/n$i"
	"$work/fgtop" serve --demo --seed "$i" --node "gpu-node0$i" --listen 127.0.0.1:0 \
		--authorized-keys "$work/authorized_keys" --host-key "$work/n$i/host_key" --log "$work/n$i/log" 2>/dev/null &
	pids+=($!)
	end=$((SECONDS + limit))
	until [[ -s "$work/n$i/host_key" ]] && grep -q 'msg=listening' "$work/n$i/log" 2>/dev/null; do
		((SECONDS < end)) || fail "serve $i did not start"
		sleep 0.1
	done
	port=$(grep -o 'msg=listening addr=127.0.0.1:[0-9]*' "$work/n$i/log" | head -1 | sed 's/.*://')
	echo "[127.0.0.1]:$port $(ssh-keygen -y -f "$work/n$i/host_key")" >>"$work/known_hosts"
	hosts+=("127.0.0.1:$port")
done
printf '# the smoke fleet\n%s\n' "${hosts[@]}" >"$work/hosts"

echo "== fleet smoke 120x40: ${hosts[*]}"
tm new-session -d -s fleet -x 120 -y 40 \
	"cd '$work' && env TERM=tmux-256color ./fgtop fleet --hosts @hosts --identity id --known-hosts known_hosts --stale-after 1s --unreachable-after 4s --heartbeat 300ms 2>stderr; echo EXIT=\$? >exit"
wait_for '3 live' "three live nodes"
wait_for '^▶ gpu-node01 +live' "the cursor on gpu-node01"
tm send-keys -t fleet ':' 'fit cuda.shares=0.2' Enter
wait_for 'cuda.shares=0.2 fits on [0-9]/3' "the :fit verdict"
wait_for 'fits GPU[0-9]' "a placement in the FIT column"
tm send-keys -t fleet Enter
wait_for 'read-only' "the node's own console, read-only"
wait_for '^─ Devices' "its device view"
tm send-keys -t fleet q
wait_for '^─ Nodes by' "q back to the fleet"
kill "${pids[1]}"
wait_for 'gpu-node02 +(STALE|UNREACHABLE)' "the killed node marked"
wait_for 'gpu-node02 +UNREACHABLE' "the killed node unreachable"
wait_for '2 live · 1 unreachable' "the header counting it"
tm resize-window -t fleet -x 80 -y 24
wait_for '^  NODE +STATE +HELD/CAP' "the table redrawn for 80 columns"
lines=$(tm capture-pane -p -J -t fleet)
wide=$(perl -CSD -ne 'chomp; s/\s+$//; print "$.: ", length, "\n" if length > 80' <<<"$lines")
[[ -z "$wide" ]] || fail "80x24: lines wider than 80 columns: $wide"
tm send-keys -t fleet q
end=$((SECONDS + limit))
until [[ -s "$work/exit" ]]; do
	((SECONDS < end)) || fail "q: fgtop fleet still running"
	sleep 0.1
done
grep -qx 'EXIT=0' "$work/exit" || fail "q: fgtop fleet ended with $(cat "$work/exit")"
echo "== fleet smoke: ok"
