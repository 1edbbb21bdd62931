package demo

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

// mount is one MOUNTS entry: source, target inside the container, and
// permission (ro, rw or wd).
type mount struct {
	src, dst, perm string
}

// runnerDir is where the agent's kernel-runner files live on the host (a
// Python 3.13 virtualenv, as on current agents).
const runnerDir = "/opt/backend.ai/venv/lib/python3.13/site-packages/ai/backend"

// runnerFiles are the krunner files every kernel gets, host name under
// runnerDir/runner → path inside the container.
var runnerFiles = [][2]string{
	{"su-exec.x86_64.bin", "/opt/kernel/su-exec"},
	{"libbaihook.ubuntu22.04.x86_64.so", "/opt/kernel/libbaihook.so"},
	{"dropbearmulti.x86_64.bin", "/opt/kernel/dropbearmulti"},
	{"sftp-server.x86_64.bin", "/opt/kernel/sftp-server"},
	{"tmux.x86_64.bin", "/opt/kernel/tmux"},
	{"ttyd_linux.x86_64.bin", "/opt/kernel/ttyd"},
	{"yank.sh", "/opt/kernel/yank.sh"},
	{"all-smi.x86_64.bin", "/usr/local/bin/all-smi"},
	{"bssh.x86_64.bin", "/usr/local/bin/bssh"},
	{"extract_dotfiles.py", "/opt/kernel/extract_dotfiles.py"},
	{"entrypoint.sh", "/opt/kernel/entrypoint.sh"},
	{"fantompass.py", "/opt/kernel/fantompass.py"},
	{"hash_phrase.py", "/opt/kernel/hash_phrase.py"},
	{"words.json", "/opt/kernel/words.json"},
}

// kernelMounts lists a kernel's MOUNTS in the agent's order: the intrinsic
// mounts (its own config/ and work/ under the scratch root, time zone, the
// agent socket), the user's virtual folders, then the kernel runner's files
// and volume.
func kernelMounts(root string, agent model.AgentID, k *kernelRec) []mount {
	kdir := filepath.Join(root, string(k.id))
	out := []mount{
		{filepath.Join(kdir, "config"), "/home/config", "ro"},
		{filepath.Join(kdir, "work"), "/home/work", "rw"},
		{"/etc/localtime", "/etc/localtime", "ro"},
		{"/etc/timezone", "/etc/timezone", "ro"},
		{"/var/run/backend.ai/ipc/container/agent." + string(agent) + ".sock", "/opt/kernel/agent.sock", "rw"},
	}
	for _, v := range k.vfolders {
		perm := "rw"
		if v.readOnly {
			perm = "ro"
		}
		out = append(out, mount{v.host, "/home/work/" + v.name, perm})
	}
	for _, f := range runnerFiles {
		out = append(out, mount{runnerDir + "/runner/" + f[0], f[1], "ro"})
	}
	out = append(out,
		mount{"backendai-krunner.v13.x86_64.ubuntu22.04", "/opt/backend.ai", "ro"},
		mount{runnerDir + "/kernel", "/opt/backend.ai/lib/python3.12/site-packages/ai/backend/kernel", "ro"},
		mount{runnerDir + "/helpers", "/opt/backend.ai/lib/python3.12/site-packages/ai/backend/helpers", "ro"},
	)
	return out
}

// keyValue is one plugin line of resource.txt.
type keyValue struct{ key, value string }

// minSMPCount is the mock plugin's floor for a share's SM count
// (TensorFlow's TF_MIN_GPU_MULTIPROCESSOR_COUNT).
const minSMPCount = 4

// mockResourceData is the mock CUDA plugin's generate_resource_data for a
// kernel's cuda allocation (domain/backendai.md §1.5): the devices it got
// (those with a non-zero amount, in allocation order), whether they are
// virtualized, and in fractional mode each share's memory and SM limits.
// A kernel without GPUs gets the same keys with empty values.
//
// The plugin's MIG test compares slot names with SlotTypes.UNIQUE, which no
// slot name equals, so a MIG slice reads as virtualized in fractional mode
// too; the demo writes what the plugin writes.
func mockResourceData(s *inventory.MockSettings, fractional bool, a alloc.Allocation) []keyValue {
	var ids []string
	for _, sl := range a {
		for _, sh := range sl.Shares {
			if sh.Amount.Sign() > 0 {
				ids = append(ids, string(sh.Device))
			}
		}
	}
	global := make([]string, len(ids))
	for i, id := range ids {
		global[i] = strconv.Itoa(i) + ":" + id
	}
	virt := "0"
	if fractional {
		virt = "1"
	}
	out := []keyValue{
		{"CUDA_GLOBAL_DEVICE_IDS", strings.Join(global, ",")},
		{"CUDA_RESOURCE_VIRTUALIZED", virt},
	}
	if !fractional {
		return out
	}
	var mems, procs []string
	for _, sl := range a {
		if sl.Slot != model.SlotCUDAShares {
			continue
		}
		for _, sh := range sl.Shares {
			mem := truncInt(model.DecFromInt64(s.UnitMem).Mul(sh.Amount))
			proc := max(truncInt(model.DecFromInt64(int64(s.UnitProc)).Mul(sh.Amount)), minSMPCount)
			mems = append(mems, string(sh.Device)+":"+strconv.FormatInt(mem, 10))
			procs = append(procs, string(sh.Device)+":"+strconv.FormatInt(proc, 10))
		}
	}
	return append(out,
		keyValue{"CUDA_MEMORY_LIMITS", strings.Join(mems, ",")},
		keyValue{"CUDA_PROCESSOR_LIMITS", strings.Join(procs, ",")},
		keyValue{"CUDA_RESERVED_MEMORY", strconv.FormatInt(s.ReservedMemory, 10)},
	)
}

// truncInt is Python's int(Decimal): toward zero. The values here (bytes
// of a share of a GPU, SMs) always fit an int64.
func truncInt(x model.Dec) int64 {
	q, err := x.Quantize(0, apd.RoundDown)
	if err != nil {
		return 0
	}
	v, err := q.Int64()
	if err != nil {
		return 0
	}
	return v
}
