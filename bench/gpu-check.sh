#!/usr/bin/env bash
# gpu-check.sh: check fgtop on a real NVIDIA GPU node, as an operator would.
#
# Run it as root on a node with the NVIDIA driver (cgroup v2 for step 4):
#
#   sudo bash bench/gpu-check.sh                  # builds ./cmd/fgtop with cgo
#   sudo FGTOP_BIN=/usr/local/bin/fgtop WINDOW=25 bash bench/gpu-check.sh
#
# Each step prints PASS, FAIL or SKIP (with the reason); the exit status is
# 1 when any step failed. The steps:
#
#   1. NVML through the real library: `fgtop snapshot --json --devices nvml`
#      lists the GPUs nvidia-smi lists (count, UUIDs, memory).
#   2. Both CUDA plugin kinds, as the agent registers them: the open-source
#      plugin (ids "0", "1", ..., cuda.device, capacity 1) and the
#      fractional one (ids GPU-<uuid>, cuda.shares, capacity
#      min(memory / unit_mem, SMs / unit_proc) rounded down to 0.01), each
#      with a kernel holding GPU 0: no unknown-device or
#      unsupported-resource issue, the kernel on the right device, the alloc
#      map. Needs a build with --cuda-plugin and --plugin-config.
#   3. The agent's health: a stand-in agent (python3) answers GET /health
#      on 127.0.0.1 as Backend.AI's does; fgtop shows it up with its
#      version, then down once it stops; fgtop_agent_up follows.
#   4. A GPU load in a real cgroup v2 scope
#      (system.slice/docker-<id>.scope) is credited to the kernel whose
#      CID= names that container. Needs a load: LOAD_CMD, or python3 with
#      torch, or gpu_burn.
#   5. The exporter: fgtop_gpu_* telemetry with the GPUs' UUIDs.
#   6. The console in a terminal (tmux): it shows the GPUs; then its CPU at
#      rest beside nvtop 3.0.1's, on the same GPUs in the same two windows
#      of WINDOW seconds (bench/idle-vs-nvtop.sh with NVML=system: utime+
#      stime, the ratio, RSS, threads). nvtop is the one installed if it is
#      3.0.1, else Debian contrib's, fetched without touching apt's
#      configuration (SKIP when neither can be had).
#
# Without a GPU the script can check itself against the tests' fake
# library: FGTOP_NVML_LIB_DIR=<dir holding the fake libnvidia-ml.so.1> and
# FAKE_NVML_CONFIG=<its config> (internal/fakenvml; see docs/nvml.md).
# nvidia-smi is then not asked, and step 4 is skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local LC_ALL=C.UTF-8

window=${WINDOW:-25}
nvtop_want=3.0.1
work=$(mktemp -d)
sock="fgtop-gpu-check-$$"
pids=()
failed=0
tm() { tmux -u -L "$sock" -f /dev/null "$@"; }
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	tm kill-server 2>/dev/null || true
	if [[ -n ${cgdir:-} && -d $cgdir ]]; then rmdir "$cgdir" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

pass() { printf 'PASS  %s\n' "$*"; }
fail() {
	printf 'FAIL  %s\n' "$*"
	failed=1
}
skip() { printf 'SKIP  %s\n' "$*"; }
need() { command -v "$1" >/dev/null 2>&1; }

if [[ -n ${FGTOP_NVML_LIB_DIR:-} ]]; then
	export LD_LIBRARY_PATH="$FGTOP_NVML_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	fake=1
	echo "dry run on the fake NVML library in $FGTOP_NVML_LIB_DIR"
else
	fake=0
fi

need python3 || {
	echo "gpu-check needs python3 (JSON checks, the stand-in agent)" >&2
	exit 2
}

bin=${FGTOP_BIN:-}
if [[ -z $bin ]]; then
	bin="$work/fgtop"
	CGO_ENABLED=1 go build -o "$bin" ./cmd/fgtop || {
		echo "go build failed" >&2
		exit 2
	}
fi
"$bin" version

# json FILE PYTHON-EXPR: evaluates EXPR with d = the JSON document.
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

scratch="$work/scratch"
mkdir -p "$scratch"

# --- 1. NVML ---------------------------------------------------------------
if ! "$bin" snapshot --json --devices nvml --scratch-root "$scratch" >"$work/s1.json" 2>"$work/s1.err"; then
	fail "1 snapshot --devices nvml: $(cat "$work/s1.err")"
	exit 1
fi
health=$(json "$work/s1.json" 'd["source"]["health"]')
ngpu=$(json "$work/s1.json" 'sum(1 for x in d["devices"] if x["plugin"]=="cuda" and not x.get("parent"))')
[[ $health == ok ]] && pass "1 NVML source ok: $(json "$work/s1.json" 'd["source"]["detail"]')" || fail "1 NVML source $health: $(json "$work/s1.json" 'd["source"]')"
if ((fake == 0)) && need nvidia-smi; then
	nvidia-smi --query-gpu=uuid,memory.total --format=csv,noheader,nounits >"$work/smi.csv"
	want=$(wc -l <"$work/smi.csv")
	got=$(json "$work/s1.json" '" ".join(sorted("GPU-"+x["uuid"] for x in d["devices"] if x["plugin"]=="cuda" and not x.get("parent")))')
	smi=$(cut -d, -f1 "$work/smi.csv" | tr -d ' ' | sort | tr '\n' ' ' | sed 's/ $//')
	[[ $ngpu == "$want" && $got == "$smi" ]] && pass "1 the $want GPU(s) nvidia-smi lists, by UUID" || fail "1 fgtop lists [$got], nvidia-smi [$smi]"
else
	skip "1 nvidia-smi comparison (no nvidia-smi, or a dry run)"
fi
uuid0=$(json "$work/s1.json" '[x["uuid"] for x in d["devices"] if x["plugin"]=="cuda" and not x.get("parent")][0]')

# --- 2. both plugin kinds --------------------------------------------------
kernel_with() { # kernel_with ID CID LINES...
	local dir="$scratch/$1/config"
	mkdir -p "$dir"
	shift
	local cid=$1
	shift
	{
		printf 'SCRATCH_SIZE=0m\nMOUNTS=\n'
		printf '%s\n' "$@"
		printf 'CID=%s\n' "$cid"
	} >"$dir/resource.txt"
}
cid_open=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
cid_frac=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
kopen=11111111-2222-4333-8444-000000000001
kfrac=11111111-2222-4333-8444-000000000002
if "$bin" snapshot --help 2>&1 | grep -q -- --cuda-plugin; then
	check_kind() { # check_kind NAME KERNEL WANT-DEVICE WANT-SLOT FLAGS...
		local name=$1 k=$2 dev=$3 slot=$4
		shift 4
		local out="$work/$name.json"
		if ! "$bin" snapshot --json --devices nvml --scratch-root "$scratch" "$@" >"$out" 2>"$work/$name.err"; then
			fail "2 $name: $(cat "$work/$name.err")"
			return
		fi
		local bad
		bad=$(json "$out" '" | ".join(i["message"] for i in d.get("issues",[]) if i["code"] in ("unknown-device","unsupported-resource"))')
		[[ -z $bad ]] && pass "2 $name: no unknown-device or unsupported-resource issue" || fail "2 $name: $bad"
		local on
		on=$(json "$out" '",".join(sorted(i for k in d["kernels"] if k["id"]=="'"$k"'" for n, s in k["allocations"].items() if n.startswith("cuda") for i in s))')
		[[ $on == "$dev" ]] && pass "2 $name: the kernel holds $slot on $dev" || fail "2 $name: the kernel holds on [$on], want $dev"
		json "$out" '"\n".join("      %s %s capacity %s source %s" % (x["id"], x["slot"], x.get("capacity","?"), x.get("source","")) for x in d["devices"] if x["plugin"]=="cuda")'
		if "$bin" snapshot --alloc-map --devices nvml --scratch-root "$scratch" "$@" >"$work/$name.map" 2>"$work/$name.maperr" &&
			[[ ! -s $work/$name.maperr ]] && grep -q "\"$dev\"" "$work/$name.map"; then
			pass "2 $name: alloc map $(tr -d '\n ' <"$work/$name.map")"
		else
			fail "2 $name: --alloc-map: $(cat "$work/$name.map" "$work/$name.maperr")"
		fi
	}
	kernel_with "$kopen" "$cid_open" 'SLOTS={"cpu":"1","mem":"1073741824","cuda.device":"1"}' 'CUDA.DEVICE_SHARES=0:1' 'CPU_SHARES=0:1' 'MEM_SHARES=root:1073741824' 'CUDA_GLOBAL_DEVICE_IDS=0:0' 'CUDA_RESOURCE_VIRTUALIZED=0'
	echo '{"cuda": {"device_mask": ""}}' >"$work/plugin-open.json"
	check_kind open "$kopen" 0 cuda.device --cuda-plugin open --plugin-config "$work/plugin-open.json"
	rm -rf "${scratch:?}/$kopen"
	if ((ngpu >= 2)); then
		# A masked GPU is not registered and the others keep their index.
		uuid1=$(json "$work/s1.json" '[x["uuid"] for x in d["devices"] if x["plugin"]=="cuda" and not x.get("parent")][1]')
		echo "{\"cuda\": {\"device_mask\": \"$uuid1\"}}" >"$work/plugin-mask.json"
		"$bin" snapshot --json --devices nvml --scratch-root "$scratch" --cuda-plugin open --plugin-config "$work/plugin-mask.json" >"$work/mask.json" 2>&1
		ids=$(json "$work/mask.json" '",".join(x["id"] for x in d["devices"] if x["plugin"]=="cuda" and not x.get("parent"))')
		want=$(python3 -c "import sys; n=int(sys.argv[1]); print(','.join(str(i) for i in range(n) if i != 1))" "$ngpu")
		[[ $ids == "$want" ]] && pass "2 open: device_mask of GPU 1 leaves ids $ids" || fail "2 open: device_mask of GPU 1 gives [$ids], want [$want]"
	fi
	kernel_with "$kfrac" "$cid_frac" 'SLOTS={"cpu":"1","mem":"1073741824","cuda.shares":"0.5"}' "CUDA.SHARES_SHARES=GPU-$uuid0:0.5" 'CPU_SHARES=0:1' 'MEM_SHARES=root:1073741824' "CUDA_GLOBAL_DEVICE_IDS=0:GPU-$uuid0" 'CUDA_RESOURCE_VIRTUALIZED=1'
	echo '{"cuda": {"allocation_mode": "fractional", "unit_mem": "20g", "unit_proc": 8}}' >"$work/plugin-fractional.json"
	check_kind fractional "$kfrac" "GPU-$uuid0" cuda.shares --cuda-plugin fractional --plugin-config "$work/plugin-fractional.json"
	# The assumed rule, from the GPU's own memory and SM count (NVML's).
	rule=$(python3 - "$work/fractional.json" <<'EOF'
import json, sys
from decimal import Decimal, ROUND_FLOOR
d = json.load(open(sys.argv[1]))
bad = []
for x in d["devices"]:
    if x["plugin"] != "cuda" or x.get("parent"):
        continue
    if not x.get("processors"):
        bad.append("%s: no SM count in the JSON" % x["id"])
        continue
    want = min(Decimal(x["memory_bytes"]) / (20 << 30), Decimal(x["processors"]) / 8).quantize(Decimal("0.01"), rounding=ROUND_FLOOR)
    if Decimal(x.get("capacity", "-1")) != want:
        bad.append("%s: capacity %s, want %s" % (x["id"], x.get("capacity"), want))
print("; ".join(bad))
EOF
)
	[[ -z $rule ]] && pass "2 fractional: every capacity is min(memory / 20 GiB, SMs / 8) rounded down to 0.01" || fail "2 fractional: $rule"
	rm -rf "${scratch:?}/$kfrac"
else
	skip "2 both plugin kinds: this fgtop has no --cuda-plugin / --plugin-config"
fi

# --- 3. agent health -------------------------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/agent.py" <<'EOF'
import http.server, json, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"status": "ok", "version": "gpu-check-1", "component": "agent", "connectivity": {}}).encode()
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
python3 "$work/agent.py" "$port" &
agentpid=$!
pids+=("$agentpid")
cat >"$work/agent.toml" <<EOF
[agent]
id = "gpu-check"
service-addr = { host = "0.0.0.0", port = $port }
[container]
scratch-root = "$scratch"
EOF
# The fake agent answers once python has started, which on a loaded
# machine takes more than the half second this once waited.
python3 - "$port" <<'EOF'
import socket, sys, time
end = time.time() + 15
while time.time() < end:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.5).close()
        break
    except OSError:
        time.sleep(0.05)
EOF
"$bin" snapshot --json --devices nvml --config "$work/agent.toml" >"$work/h1.json" 2>"$work/h1.err"
st=$(json "$work/h1.json" '"%s %s" % (d["agents"][0].get("health",{}).get("state"), d["agents"][0].get("health",{}).get("version"))')
[[ $st == "up gpu-check-1" ]] && pass "3 agent health: up, version gpu-check-1" || fail "3 agent health: $st ($(cat "$work/h1.err"))"
kill "$agentpid"
wait "$agentpid" 2>/dev/null
"$bin" snapshot --json --devices nvml --config "$work/agent.toml" >"$work/h2.json" 2>/dev/null
st=$(json "$work/h2.json" 'd["agents"][0].get("health",{}).get("state")')
[[ $st == down ]] && pass "3 agent stopped: down" || fail "3 agent stopped: $st"

# --- 4. a GPU load in a real cgroup ------------------------------------------
load=${LOAD_CMD:-}
if [[ -z $load ]]; then
	if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
		load="python3 -c 'import torch,time
x=torch.randn(8192,8192,device=\"cuda\"); t=time.time()
while time.time()-t<60: x=(x@x); x=x/x.norm()'"
	elif need gpu_burn; then
		load="gpu_burn 60"
	fi
fi
if ((fake == 1)); then
	skip "4 GPU load in a cgroup (dry run)"
elif [[ -z $load ]]; then
	skip "4 GPU load in a cgroup: set LOAD_CMD, or install torch or gpu_burn"
elif [[ ! -f /sys/fs/cgroup/cgroup.controllers || $EUID -ne 0 ]]; then
	skip "4 GPU load in a cgroup: needs root and cgroup v2"
else
	cid=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
	kload=11111111-2222-4333-8444-000000000004
	kernel_with "$kload" "$cid" 'SLOTS={"cpu":"1","mem":"1073741824","cuda.device":"1"}' 'CUDA.DEVICE_SHARES=0:1' 'CPU_SHARES=0:1' 'MEM_SHARES=root:1073741824'
	cgdir=/sys/fs/cgroup/system.slice/docker-$cid.scope
	mkdir -p "$cgdir"
	bash -c "echo \$\$ >$cgdir/cgroup.procs; exec $load" >/dev/null 2>&1 &
	loadpid=$!
	pids+=("$loadpid")
	owner=""
	for _ in $(seq 1 60); do
		sleep 1
		"$bin" snapshot --json --devices nvml --scratch-root "$scratch" >"$work/s4.json" 2>/dev/null || continue
		owner=$(json "$work/s4.json" '" ".join("%s:%s" % (p.get("owner"), p.get("kernel","")) for x in d["devices"] for p in ((x.get("telemetry") or {}).get("processes") or []) if p["pid"]=='"$loadpid"')')
		[[ -n $owner ]] && break
	done
	[[ $owner == "kernel:$kload" ]] && pass "4 the load (pid $loadpid) in docker-$cid.scope is credited to kernel $kload" || fail "4 the load's owner: '$owner'"
	# Host processes on the GPUs are not Backend.AI's.
	json "$work/s4.json" '"\n".join("      pid %s %s %s" % (p["pid"], p.get("name",""), p.get("owner")) for x in d["devices"] for p in ((x.get("telemetry") or {}).get("processes") or []))'
fi

# --- 5. the exporter -------------------------------------------------------
eport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" exporter --listen "127.0.0.1:$eport" --devices nvml --scratch-root "$scratch" >"$work/exp.log" 2>&1 &
pids+=("$!")
metrics=""
for _ in $(seq 1 50); do
	metrics=$(python3 -c 'import urllib.request,sys; print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=2).read().decode())' "$eport" 2>/dev/null) && break
	sleep 0.2
done
n=$(grep -c "^fgtop_gpu_utilization_ratio{.*UUID=\"GPU-" <<<"$metrics")
[[ $n == "$ngpu" ]] && pass "5 exporter: fgtop_gpu_utilization_ratio for $n GPU(s)" || fail "5 exporter: $n fgtop_gpu_utilization_ratio series for $ngpu GPU(s): $(head -c 300 "$work/exp.log")"

# --- 6. the console in a terminal, and its CPU at rest ---------------------------
if ! need tmux; then
	skip "6 console: no tmux"
else
	tm new-session -d -s c -x 160 -y 48 "exec env TERM=tmux-256color $bin --devices nvml --scratch-root $scratch 2>$work/console.err"
	shown=0
	for _ in $(seq 1 100); do
		if tm capture-pane -p -t c | grep -q "GPU$((ngpu - 1)) "; then
			shown=1
			break
		fi
		sleep 0.2
	done
	((shown)) && pass "6 console shows $ngpu GPU(s)" || fail "6 console: $(tm capture-pane -p -t c | head -5)"
	echo "      console at rest, side by side with nvtop $nvtop_want (bench/idle-vs-nvtop.sh, ${window}s windows):"
	tm kill-session -t c
	# The same comparison as on the fake library (issue 29), on this
	# node's NVML: both programs in the same windows, CPU, ratio, RSS.
	nvargs=()
	if need nvtop && [[ $(nvtop --version 2>&1) == "nvtop version $nvtop_want" ]]; then
		nvargs=(NVTOP_BIN="$(command -v nvtop)")
	fi
	# A dry run (the tests run one) uses an nvtop already at hand and
	# fetches none.
	env "${nvargs[@]}" NVTOP_FETCH=$((1 - fake)) FGTOP_BIN="$bin" NVML=system GPUS="$ngpu" WINDOW="$window" ROUNDS=2 SETTLE=5 \
		bash bench/idle-vs-nvtop.sh >"$work/vs.out" 2>&1
	rc=$?
	sed 's/^/      /' "$work/vs.out"
	case $rc in
	0) pass "6 console and nvtop $nvtop_want side by side (figures above; the target is a ratio ≤ 1.0)" ;;
	2) skip "6 nvtop comparison: no nvtop $nvtop_want (not installed, not cached, and not fetched from Debian contrib)" ;;
	*) fail "6 side by side with nvtop: bench/idle-vs-nvtop.sh failed (above)" ;;
	esac
fi

exit "$failed"
