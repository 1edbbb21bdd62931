package agentconfig

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// mutationPools are values substituted for a key's value: each pool mixes
// what main accepts with what it refuses, in the spellings operators write.
var mutationPools = map[string][]string{
	"cpu":                         {`2`, `"2"`, `2.0`, `2.5`, `true`, `-1`, `["0", "1"]`, `"1.0"`, `" 3 "`, `"1_0"`, `0`, `"0x2"`, `1e0`, `"1."`, `[]`},
	"mem":                         {`"4G"`, `"4g"`, `"4GiB"`, `"4 GiB"`, `4294967296`, `"1.5"`, `"1.0"`, `4294967296.0`, `"-1G"`, `"0"`, `"lots"`, `"1.5G"`, `"8B"`, `"8 b"`, `true`, `"1e3k"`, `"4GB"`, `" 4g "`, `"4_096M"`, `"inf"`, `"1.5k"`},
	"agent-sock-port":             {`6010`, `"6010"`, `1023`, `1024`, `65535`, `65536`, `6010.0`, `6010.5`, `"0x10"`, `true`, `"6_010"`, `" 6010 "`},
	"allocation-mode":             {`"manual"`, `"shared"`, `"auto-split"`, `"Manual"`, `"auto_split"`, `1`, `"manual "`},
	"reserved-cpu":                {`1`, `-1`, `"1"`, `1.5`, `0`, `1000000`, `"2.0"`},
	"reserved-mem":                {`"1G"`, `0`, `"1.0"`, `"-1G"`, `"64T"`, `1.5`, `"512m"`},
	"port-range":                  {`[30000, 31000]`, `[30000, 31000, 32000]`, `["30000", "31000"]`, `[30000.5, 31000]`, `"30000-31000"`, `[true, 2]`, `[31000, 30000]`, `["3e4", 1]`},
	"affinity-policy":             {`"interleaved"`, `"PACKED"`, `0`, `2`, `true`, `"prefer_single_node"`, `"Interleaved "`},
	"id":                          {`"x"`, `1`, `""`, `"i-a"`, `"i-b"`, `"I-A"`},
	"kernel-creation-concurrency": {`0`, `1`, `32`, `33`, `"4"`},
	"scratch-type":                {`"hostdir"`, `"memory"`, `"k8s-nfs"`, `"nope"`, `"HOSTDIR"`},
	"rpc-listen-addr":             {`"0.0.0.0:6001"`, `"169.254.1.1:6001"`, `{ host = "0.0.0.0", port = 70000 }`, `["0.0.0.0", "6001"]`, `"6001"`, `["a", 1, 2]`, `{ host = "fe80::1", port = 6001 }`, `"[::1]:6001"`},
	"backend":                     {`"docker"`, `"Docker"`, `"kubernetes"`, `"dummy"`, `1`},
	"scaling-group-type":          {`"compute"`, `"storage"`, `"COMPUTE"`},
	"devices":                     {`{ "cuda.shares" = "2.0" }`, `{ "cuda.shares" = 2 }`, `{ "cuda.shares" = "-0.5" }`, `{ "cuda.shares" = "nan" }`, `{ "cuda.shares" = " 1.5 " }`, `{ "cuda.shares" = true }`, `{ cuda = ["cuda0"] }`, `{ cuda = "x" }`, `{ cuda = "0.5" }`, `{ cuda = 2 }`, `{}`, `{ cuda.shares = "1" }`, `{ "cuda.shares" = "1e0", "cuda.mem" = "1" }`, `{ cpu = ["0"] }`, `"cuda"`},
}

// extraLines are key-values inserted under a table header, and whole
// tables appended: the rest of the file, which the agent validates too.
var extraLines = map[string][]string{
	"[etcd]": {`addr = "127.0.0.1:2379"`, `addr = "2379"`, `addr = [{ host = "a", port = 1 }, { host = "b", port = 2 }]`, `addr = { host = "a", port = 0 }`,
		`namespace = 1`, `user = "u"`, `password = 2`, `addr = ["a", "2379"]`, `addr = ["a", 1, 2]`},
	"[agent]": {`id = "x"`, `id = 5`, `mode = "docker"`, `backend = "k8s"`, `ipc-base-path = "/tmp/ipc"`, `ipc-base-path = 1`,
		`event-loop = "uvloop"`, `event-loop = "trio"`, `aiomonitor-port = 70000`, `aiomonitor-termui-port = "38200"`, `ssl-enabled = "yes"`,
		`ssl-enabled = "maybe"`, `ssl-cert = "/nonexistent/cert.pem"`, `public-host = 1`, `allow-compute-plugins = ["ai.backend.accelerator.mock"]`,
		`allow-compute-plugins = "mock"`, `kernel-creation-concurrency = 0`, `force-terminate-abusing-containers = 2`, `scaling-group-type = "gpu"`,
		`sync-container-lifecycles = { enabled = true, interval = -1 }`, `utilization-metric = { node = { interval = 0 } }`, `rpc-listen-addr = "169.254.0.1:6001"`,
		`service-addr = "0.0.0.0:6003"`, `initial-resource-group-name = "default"`, `initial-resource-group-name = 3`, `metadata-server-port = 0`},
	"[container]": {`kernel-uid = 1000`, `kernel-uid = "nosuchuser-fgtop"`, `kernel-uid = "root"`, `kernel-gid = 1.5`, `scratch-size = "10G"`, `scratch-size = "lots"`,
		`stats-type = "cgroup"`, `stats-type = "proc"`, `sandbox-type = "jail"`, `jail-args = ["a"]`, `jail-args = "a"`, `port-reuse-cooldown-sec = -1`,
		`bind-host = 1`, `kernel-host = "0.0.0.0"`, `krunner-volumes = { a = "b" }`, `krunner-volumes = { a = 1 }`, `swarm-enabled = "no"`, `scratch-type = "memory"`},
	"[resource]": {`memory-align-size = "16M"`, `memory-align-size = 1.5`, `allocation-order = ["cuda", "cpu"]`, `allocation-order = "cuda"`,
		`reserved-disk = "8G"`, `reserved-disk = "-1"`, `affinity-policy = 1`},
}

var extraTables = []string{
	"[debug]\nenabled = 7\nlog-stats = 1\n", "[debug]\nheartbeat-interval = \"x\"\n", "[debug.coredump]\nbackup-count = 0\n",
	"[container-logs]\nmax-length = \"10M\"\ndriver = \"journald\"\n", "[container-logs]\nchunk-size = \"64K\"\n", "[api]\npull-timeout = -1\n",
	"[api]\npush-timeout = 5\n", "[kernel-lifecycles]\ninit-polling-attempt = \"ten\"\n", "[logging]\nlevel = 1\n", "[redis]\naddr = 1\n",
	"[plugins]\ncuda = 1\n",
	"[logging]\ndrivers = [\"file\"]\n[logging.file]\npath = \"/tmp/fgtop-log\"\nfilename = \"a.log\"\n", "[logging]\nlevel = \"debug\"\npkg-ns = { \"\" = \"warning\" }\n",
	"[logging.console]\nformat = \"SIMPLE\"\n", "[logging]\ndrivers = [\"Console\"]\n", "[logging.file]\nfilename = \"a.log\"\n",
	"[redis]\naddr = \"127.0.0.1:6379\"\nsentinel = \"a:1,b:2\"\n", "[redis]\nsentinel = \"a\"\n", "[redis]\nredis-helper-config = { socket-timeout = \"x\" }\n",
	"[service-discovery]\nendpoints = [{ role = \"main\", scope = \"x\", address = \"a\", port = \"1\", protocol = \"http\" }]\n",
	"[service-discovery]\nendpoints = [{ role = \"main\" }]\n", "[logging.logstash]\nendpoint = { host = \"a\", port = 0 }\n", "[otel]\nmax-queue-size = \"big\"\n", "[otel]\nenabled = true\n", "[service-discovery]\ntype = \"etcd\"\n", "[pyroscope]\nenabled = \"x\"\n",
}

// tomlEdges are TOML corners where two parsers may disagree; each is put
// under [container] of a file main loads (as an unknown key, so only TOML
// itself decides).
var tomlEdges = []string{
	"x = nan", "x = +inf", "x = -0.0", "x = 1979-05-27T07:32:00Z", "x = 1979-05-27", "x = 07:32:00", "x = 1979-05-27 07:32:00",
	"x = 9223372036854775807", "x = 9223372036854775808", "x = -9223372036854775809", "x = 01", "x = 1__0", "x = 0x_1", "x = 1_000",
	"x = 0b102", "x = 1e400", "x = .5", "x = 5.", `x = "\q"`, `x = "\u00e9"`, `x = "\U0001F600"`, `x = "\uD800"`,
	"x = \"a\tb\"", "x = \"a\x01b\"", "x = 'a\x7fb'", "x = \"\"\"\na\\\n   b\"\"\"", "x = '''a\nb'''", `x = [1, "a", { b = 1 }]`,
	`"" = 1`, "'' = 1", "é = 1", "x.y = 1\nx.z = 2", "x = { a = 1 }\nx.b = 2", "x = { a = 1, }", "x = [\n1,\n2,\n]", "x = [1,,2]",
	"x = 1 # comment \x01", "x = true\r\ny = 1", "x = 1\ry = 2", `x = "\r"`, "x = 1979-05-27T07:32:00.999999999+07:00", "x = 1979-05-27T25:00:00Z",
	"x = 2021-02-29", "x = 0o8", "x = -0", "x = +0x1", "x = 1.2e+3", "x = 1e", `x = "\e"`, `x = "\x41"`, "[container.y]\nz = 1", "x = inf\ny = -nan",
	"\ufeffx = 1", "x = \"\ufeff\"", "x = 1\n[container]\n", "x = [ ]", "x = []\n[[container.x]]", "a.b.c = 1\na.b = 2",
}

var mutKeyRe = regexp.MustCompile(`^(\s*)([A-Za-z_-]+)(\s*=\s*)(.*)$`)

// mutate makes one variant of a case's text: a value from a pool, a key
// spelled the other way (or both ways), a line dropped, the mode switched.
func mutate(r *rand.Rand, text string) string {
	lines := strings.Split(text, "\n")
	if r.IntN(3) == 0 {
		// Somewhere else in the file.
		if r.IntN(3) == 0 {
			return text + "\n" + extraTables[r.IntN(len(extraTables))]
		}
		for i, l := range lines {
			if pool, ok := extraLines[strings.TrimSpace(l)]; ok && r.IntN(2) == 0 {
				lines[i] = l + "\n" + pool[r.IntN(len(pool))]
				return strings.Join(lines, "\n")
			}
		}
	}
	n := 1 + r.IntN(3)
	for range n {
		i := r.IntN(len(lines))
		m := mutKeyRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		key := strings.ReplaceAll(m[2], "_", "-")
		switch op := r.IntN(10); {
		case op < 6:
			if pool, ok := mutationPools[key]; ok {
				lines[i] = m[1] + m[2] + m[3] + pool[r.IntN(len(pool))]
			}
		case op < 8:
			other := strings.ReplaceAll(m[2], "-", "_")
			if other == m[2] {
				other = strings.ReplaceAll(m[2], "_", "-")
			}
			if r.IntN(2) == 0 {
				lines[i] = m[1] + other + m[3] + m[4]
			} else if other != m[2] {
				// Both spellings in one table: the kebab one wins.
				alt := m[4]
				if pool, ok := mutationPools[key]; ok {
					alt = pool[r.IntN(len(pool))]
				}
				lines[i] = lines[i] + "\n" + m[1] + other + m[3] + alt
			}
		case op < 9:
			lines[i] = ""
		default:
			lines[i] = m[1] + m[2] + m[3] + mutationPools["allocation-mode"][r.IntN(3)]
		}
	}
	return strings.Join(lines, "\n")
}

type oracleLine struct {
	File   string `json:"file"`
	OK     bool   `json:"ok"`
	Errors []struct {
		Loc, Msg, Type string
	} `json:"errors"`
	Startup *struct {
		OK    bool `json:"ok"`
		Error *struct {
			Type, Msg string
		} `json:"error"`
	} `json:"startup"`
}

// runOracle runs Backend.AI's loader on every file in one process.
func runOracle(t *testing.T, oracle, schema string, files []string, extra ...string) map[string]oracleLine {
	t.Helper()
	list := filepath.Join(t.TempDir(), "files.txt")
	if err := os.WriteFile(list, []byte(strings.Join(files, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(oracle, append([]string{"--schema", schema, "--files-from", list}, extra...)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
		t.Fatalf("oracle %s: %v\n%s", schema, err, stderr.String())
	}
	got := map[string]oracleLine{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l oracleLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("oracle output: %v: %s", err, sc.Text())
		}
		got[l.File] = l
	}
	if len(got) != len(files) {
		t.Fatalf("oracle %s answered %d of %d files\n%s", schema, len(got), len(files), stderr.String())
	}
	return got
}

// TestJudgeAgainstOracle generates variants of the fixture cases (fixed
// seed) and requires fgtop's verdicts to be Backend.AI's own loader's, for
// main and for PR #8463, on every one.
func TestJudgeAgainstOracle(t *testing.T) {
	oracle := testfix.Oracle(t)
	cs := loadConfigCases(t)
	seed := uint64(11)
	if s := os.Getenv("FGTOP_ORACLE_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	r := rand.New(rand.NewPCG(seed, 8463))
	dir := t.TempDir()
	const variants = 600
	texts := map[string]string{}
	var files []string
	seen := map[string]bool{}
	for i := 0; len(files) < variants && i < variants*4; i++ {
		c := cs[r.IntN(len(cs))]
		text := mutate(r, c.Input)
		if seen[text] {
			continue
		}
		seen[text] = true
		p := filepath.Join(dir, fmt.Sprintf("v%03d-%s.toml", len(files), c.ID))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
		texts[p] = text
	}
	// TOML corners, and a BOM, CRLF and CR line ends on a whole file.
	base := ""
	for _, c := range cs {
		if c.Main.OK && strings.Contains(c.Input, "[container]\n") {
			base = c.Input
			break
		}
	}
	edges := []string{"\ufeff" + base, strings.ReplaceAll(base, "\n", "\r\n"), strings.ReplaceAll(base, "\n", "\r")}
	for _, e := range tomlEdges {
		edges = append(edges, strings.Replace(base, "[container]\n", "[container]\n"+e+"\n", 1))
	}
	for i, text := range edges {
		p := filepath.Join(dir, fmt.Sprintf("toml-edge-%02d.toml", i))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
		texts[p] = text
	}
	mainV := runOracle(t, oracle, "main", files)
	draftV := runOracle(t, oracle, "pr8463", files)
	agree := 0
	for _, p := range files {
		v := Judge([]byte(texts[p]))
		ok := true
		if v.Main != mainV[p].OK {
			ok = false
			t.Errorf("%s: main: fgtop ok=%v, Backend.AI ok=%v %+v; fgtop: %v\n%s", filepath.Base(p), v.Main, mainV[p].OK, mainV[p].Errors, v.MainErrors, texts[p])
		}
		if v.Draft != draftV[p].OK {
			ok = false
			t.Errorf("%s: pr8463: fgtop ok=%v, PR #8463 ok=%v %+v; fgtop: %v\n%s", filepath.Base(p), v.Draft, draftV[p].OK, draftV[p].Errors, v.DraftErrors, texts[p])
		}
		if ok {
			agree++
		}
	}
	accepted := 0
	for _, p := range files {
		if mainV[p].OK {
			accepted++
		}
	}
	t.Logf("oracle differential: %d variants, %d agree under both schemas; main accepts %d", len(files), agree, accepted)

	// Start-up: main's own ResourceAllocator on the fixture node (four
	// mock GPUs of 1.00 cuda.shares) with a small host and a large one.
	for _, h := range []struct {
		spec  string
		cores int
		memG  int64
	}{{"cores=2,mem=4G,cuda.shares=4x1.00", 2, 4}, {"cores=256,mem=2048G,cuda.shares=4x1.00", 256, 2048}} {
		got := runOracle(t, oracle, "main", files, "--node", h.spec)
		devs := node(h.cores, []string{"cuda0", "cuda1", "cuda2", "cuda3"}, h.memG)
		agreeStart, n := 0, 0
		for _, p := range files {
			o := got[p]
			if o.Startup == nil {
				continue
			}
			n++
			c, err := Parse(p, []byte(texts[p]))
			if err != nil {
				t.Errorf("%s: main loads it, fgtop's Parse: %v", filepath.Base(p), err)
				continue
			}
			probs := c.Validate(devs)
			if (len(probs) == 0) != o.Startup.OK {
				t.Errorf("%s on %s: start-up: fgtop %v, Backend.AI main ok=%v %+v\n%s", filepath.Base(p), h.spec, probs, o.Startup.OK, o.Startup.Error, texts[p])
				continue
			}
			agreeStart++
		}
		t.Logf("oracle start-up differential on %s: %d/%d agree", h.spec, agreeStart, n)
	}
}
