// Command mktree lays out a realistic scratch tree for benchmarks: N kernel
// directories, each with a ~3 KB resource.txt shaped like the agent's (a long
// MOUNTS line, SLOTS, *_SHARES lines, plugin lines, CID), holding fractional
// shares on the four GPUs of the fixture mock-accelerator.toml.
//
//	go run ./bench/mktree -n 10000 -dir /tmp/scratch
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
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
	flag.Parse()
	if *dir == "" {
		log.Fatal("-dir is required")
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
	}
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
