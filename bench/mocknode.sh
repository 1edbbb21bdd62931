#!/usr/bin/env bash
# Shared by bench/idlecpu.sh and bench/latency.sh (sourced, not run): the
# fgtop binary and an 8-GPU mock node with a scratch root.

# build_fgtop WORK: WORK/fgtop from $FGTOP_BIN, or built from ./cmd/fgtop.
build_fgtop() {
	if [[ -n "${FGTOP_BIN:-}" ]]; then
		cp "$FGTOP_BIN" "$1/fgtop"
	else
		go build -o "$1/fgtop" ./cmd/fgtop
	fi
}

# make_node DIR NKERNELS: an 8-GPU mock node (DIR/mock-accelerator.toml,
# DIR/etcd.json) and a scratch root DIR/scratch where kernel i holds 0.40
# shares of GPU (i mod 8).
make_node() {
	local dir=$1 n=$2 i g
	{
		echo 'slot_name = "cuda"'
		echo 'device_plugin_name = "CUDADevice"'
		echo 'devices = ['
		for g in 1 2 3 4 5 6 7 8; do
			printf '  { mother_uuid = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d%02d", model_name = "NVIDIA A100-SXM4-40GB", numa_node = %d, subproc_count = 108, memory_size = "40G", is_mig_device = false },\n' "$g" $(((g - 1) / 4))
		done
		echo ']'
		cat <<'EOF'
[attributes]
nvidia_driver = "535.104.05"
cuda_runtime = "12.2"
[formats.device]
display_unit = "GPU"
display_icon = "gpu1"
human_readable_name = "GPU"
description = "CUDA-capable GPU"
number_format = { binary = false, round_length = 0 }
[formats.shares]
display_unit = "fGPU"
display_icon = "gpu1"
human_readable_name = "fGPU"
description = "CUDA-capable GPU (fractional)"
number_format = { binary = false, round_length = 2 }
EOF
	} >"$dir/mock-accelerator.toml"
	cat >"$dir/etcd.json" <<'EOF'
{"config": {"plugins": {"accelerator": {"mock": {"allocation_mode": "fractional",
  "unit_mem": "40g", "unit_proc": "108", "quantum_size": "0.1", "reserved_memory": "67108864"}}}}}
EOF
	mkdir -p "$dir/scratch"
	for ((i = 0; i < n; i++)); do
		local id
		id=$(printf '%08x-0000-4000-8000-%012x' $((0x1000 + i)) "$i")
		mkdir -p "$dir/scratch/$id/config"
		resource_txt "$dir" "$id" $((i % 8 + 1)) 0.40 >"$dir/scratch/$id/config/resource.txt"
	done
}

# resource_txt DIR ID GPU SHARES: a resource.txt holding SHARES of GPU (1-8).
resource_txt() {
	local dir=$1 id=$2 uuid
	uuid=$(printf 'c59395cd-ac91-4cd3-a1b0-3d2568aa2d%02d' "$3")
	printf '%s\n' "SCRATCH_SIZE=0m" \
		"MOUNTS=$dir/scratch/$id/config:/home/config:ro,$dir/scratch/$id/work:/home/work:rw" \
		"SLOTS={\"cuda.shares\":\"$4\"}" "UNIFIED_DEVICES=[]" "CUDA.SHARES_SHARES=$uuid:$4" \
		"CUDA_GLOBAL_DEVICE_IDS=0:$uuid" "CUDA_RESOURCE_VIRTUALIZED=1" "CID=$(printf '%064x' 1)"
}
