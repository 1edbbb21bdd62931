package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/etcdtest"
	"github.com/fgtop/fgtop/internal/testfix"
)

// TestMockSettingsScopesAlikeByRegistration: the agents' node scopes are
// compared by what they make the mock plugin register, as the CUDA
// plugin's are (TestSettingsDifferByRegistration): one agent's
// device_mask (which in the mock hides statistics only) or a unit_mem
// spelled "40960m" for "40g" is not "set them differently", which left
// the node unchecked (exit 1). A value one agent's plugin refuses stops
// that agent: bad input, not "differently".
func TestMockSettingsScopesAlikeByRegistration(t *testing.T) {
	etcd := etcdtest.Start(t)
	const ns = "fgtop-mock-scopes"
	global := "/sorna/" + ns + "/config/plugins/accelerator/mock/"
	nodeB := "/sorna/" + ns + "/nodes/agents/i-gpu-node01-b/config/plugins/accelerator/mock/"
	for k, v := range map[string]string{"allocation_mode": "fractional", "unit_mem": "40g", "unit_proc": "108"} {
		etcd.Put(global+k, v)
	}
	fix := testfix.Dir(t, "backendai")
	cfg := etcdSlotConfig(t, etcd, ns)
	check := func() (int, string) {
		return runCLI(t, "check", "--config", cfg, "--devices", filepath.Join(fix, "mock-accelerator.toml"),
			"--host-cpus", "0-63", "--host-mem", "512g")
	}

	etcd.Put(nodeB+"device_mask", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01")
	etcd.Put(nodeB+"unit_mem", "40960m")
	code, out := check()
	wantCode(t, code, exitOK, out, "the agent starts on this node")
	if strings.Contains(out, "set them differently") {
		t.Fatalf("settings alike in what they register were called different:\n%s", out)
	}

	etcd.Put(nodeB+"unit_proc", "1")
	code, out = check()
	wantCode(t, code, exitBadUsage, out, "as agent i-gpu-node01-b reads them", "unit_proc", "below the plugin's minimum")
}
