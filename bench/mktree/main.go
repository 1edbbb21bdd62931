// Command mktree lays out a realistic scratch tree for benchmarks: N kernel
// directories, each with a ~3 KB resource.txt shaped like the agent's (a long
// MOUNTS line, SLOTS, *_SHARES lines, plugin lines, CID), holding fractional
// shares on the four GPUs of the fixture mock-accelerator.toml.
//
// With -recovery F, a fraction F of the kernels (1 = every kernel) also get
// a config/recovery.json made from one of the real records in
// testdata/fixtures/backendai/recovery.*.json (chosen at random): the same
// size and shape, with the kernel's own id (in "id" and
// "ownership_data.kernel_id") and the agent id -agent (in "agent_id" and
// "ownership_data.agent_id"), which is what the agent writes at a kernel's
// creation and what fgtop's attribution reads.
//
//	go run ./bench/mktree -n 10000 -dir /tmp/scratch
//	go run ./bench/mktree -n 10000 -dir /tmp/scratch-rec -recovery 1
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var gpus = []string{
	"c59395cd-ac91-4cd3-a1b0-3d2568aa2d01", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02",
	"c59395cd-ac91-4cd3-a1b0-3d2568aa2d03", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04",
}

func main() {
	n := flag.Int("n", 10000, "number of kernels")
	dir := flag.String("dir", "", "scratch root to create (must not exist)")
	seed := flag.Uint64("seed", 1, "random seed")
	recFrac := flag.Float64("recovery", 0, "fraction of kernels (0..1) that get a config/recovery.json")
	agent := flag.String("agent", "i-gpu-node01-numa0", "agent id written into each recovery.json")
	fixtures := flag.String("fixtures", "testdata/fixtures/backendai", "directory of the recovery.*.json templates")
	flag.Parse()
	if *dir == "" {
		log.Fatal("-dir is required")
	}
	if *recFrac < 0 || *recFrac > 1 {
		log.Fatal("-recovery must be between 0 and 1")
	}
	var templates []template
	if *recFrac > 0 {
		var err error
		if templates, err = loadTemplates(*fixtures); err != nil {
			log.Fatal(err)
		}
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	r := rand.New(rand.NewPCG(*seed, *seed))
	for i := 0; i < *n; i++ {
		id := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xfff, r.Uint32()&0xfff, r.Uint64()&0xffffffffffff)
		cfg := filepath.Join(*dir, id, "config")
		if err := os.MkdirAll(cfg, 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cfg, "resource.txt"), []byte(resourceText(r, *dir, id)), 0o644); err != nil {
			log.Fatal(err)
		}
		// Drawn for every kernel whatever -recovery is, so the resource.txt
		// files are the same with and without records for one seed.
		pick, draw := r.IntN(1<<20), r.Float64()
		if draw < *recFrac {
			t := templates[pick%len(templates)]
			if err := os.WriteFile(filepath.Join(cfg, "recovery.json"), t.fill(id, *agent), 0o644); err != nil {
				log.Fatal(err)
			}
		}
	}
}

// template is a real recovery.json with its kernel and agent ids found.
type template struct {
	name          string
	data          string
	kernel, agent string
}

var (
	idRe    = regexp.MustCompile(`"(?:id|kernel_id)":"([^"]+)"`)
	agentRe = regexp.MustCompile(`"agent_id":"([^"]+)"`)
)

// loadTemplates reads every recovery.*.json of dir.
func loadTemplates(dir string) ([]template, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "recovery.*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no recovery.*.json in %s (run from the repository root, or give -fixtures)", dir)
	}
	var out []template
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		k, a := idRe.FindSubmatch(b), agentRe.FindSubmatch(b)
		if k == nil || a == nil {
			return nil, fmt.Errorf("%s: no id or agent_id to replace", p)
		}
		out = append(out, template{name: p, data: string(b), kernel: string(k[1]), agent: string(a[1])})
	}
	return out, nil
}

// fill returns the template with the kernel's and the agent's ids.
func (t template) fill(kernel, agent string) []byte {
	s := strings.ReplaceAll(t.data, `"`+t.kernel+`"`, `"`+kernel+`"`)
	s = strings.ReplaceAll(s, `"agent_id":"`+t.agent+`"`, `"agent_id":"`+agent+`"`)
	return []byte(s)
}

func resourceText(r *rand.Rand, root, id string) string {
	var b strings.Builder
	b.WriteString("SCRATCH_SIZE=0m\nMOUNTS=")
	mounts := []string{
		root + "/" + id + "/config:/home/config:ro", root + "/" + id + "/work:/home/work:rw",
		"/etc/localtime:/etc/localtime:ro", "/etc/timezone:/etc/timezone:ro",
		"/var/run/backend.ai/ipc/container/agent.i-gpu-node01.sock:/opt/kernel/agent.sock:rw",
	}
	for _, f := range []string{"su-exec.x86_64.bin:/opt/kernel/su-exec", "libbaihook.ubuntu22.04.x86_64.so:/opt/kernel/libbaihook.so",
		"dropbearmulti.x86_64.bin:/opt/kernel/dropbearmulti", "sftp-server.x86_64.bin:/opt/kernel/sftp-server",
		"tmux.x86_64.bin:/opt/kernel/tmux", "ttyd_linux.x86_64.bin:/opt/kernel/ttyd", "yank.sh:/opt/kernel/yank.sh",
		"all-smi.x86_64.bin:/usr/local/bin/all-smi", "bssh.x86_64.bin:/usr/local/bin/bssh",
		"extract_dotfiles.py:/opt/kernel/extract_dotfiles.py", "entrypoint.sh:/opt/kernel/entrypoint.sh",
		"fantompass.py:/opt/kernel/fantompass.py", "hash_phrase.py:/opt/kernel/hash_phrase.py", "words.json:/opt/kernel/words.json"} {
		mounts = append(mounts, "/opt/backend.ai/venv/lib/python3.13/site-packages/ai/backend/runner/"+f+":ro")
	}
	mounts = append(mounts, "backendai-krunner.v13.x86_64.ubuntu22.04:/opt/backend.ai:ro")
	b.WriteString(strings.Join(mounts, ","))
	g := r.IntN(len(gpus))
	shares := []string{"0.10", "0.20", "0.30", "0.50"}[r.IntN(4)]
	cpu := 1 + r.IntN(4)
	fmt.Fprintf(&b, "\nSLOTS={\"cpu\":\"%d\",\"mem\":\"4294967296\",\"cuda.shares\":\"%s\"}\nUNIFIED_DEVICES=[]\n", cpu, shares)
	fmt.Fprintf(&b, "CUDA.SHARES_SHARES=%s:%s\n", gpus[g], shares)
	b.WriteString("CPU_SHARES=")
	for c := 0; c < cpu; c++ {
		if c > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d:1", r.IntN(32))
	}
	b.WriteString("\nMEM_SHARES=root:4g\n")
	fmt.Fprintf(&b, "CUDA_GLOBAL_DEVICE_IDS=0:%s\nCUDA_RESOURCE_VIRTUALIZED=1\n", gpus[g])
	fmt.Fprintf(&b, "CUDA_MEMORY_LIMITS=%s:21474836480\nCUDA_PROCESSOR_LIMITS=%s:54\nCUDA_RESERVED_MEMORY=67108864\n", gpus[g], gpus[g])
	fmt.Fprintf(&b, "CID=%016x%016x%016x%016x\n", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64())
	return b.String()
}
