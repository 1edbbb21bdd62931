package nodeopen

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/testfix"
)

// TestScan: one snapshot of a real scratch tree on the mock's devices,
// the config's roots replaced by --scratch-root's; a root that does not
// exist is said and returned; a bad root or device file is the caller's
// (an *InputError, a *DeviceError), with nothing scanned; so is a root
// named for an agent the config does not have.
func TestScan(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "i-a")
	id := "2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8"
	testfix.WriteFile(t, root, filepath.Join(id, "config", "resource.txt"),
		"SLOTS={\"cuda.shares\":\"0.5\"}\nCUDA.SHARES_SHARES=c59395cd-ac91-4cd3-a1b0-3d2568aa2d04:0.50\n")
	cfgPath := testfix.WriteFile(t, dir, "agent.toml", testfix.AgentTOML("[agent]\nid = \"i-a\"\n"+
		"[container]\nscratch-root = \""+filepath.Join(dir, "elsewhere")+"\"\n"))
	cfg, err := agentconfig.Load(cfgPath)
	if cfg == nil {
		t.Fatal(err)
	}
	etcd := filepath.Join("..", "inventory", "testdata", "mock-accelerator.etcd.json")
	for _, tt := range []struct {
		name    string
		roots   []string
		devices string
		kernels int
		blind   int
		err     func(error) bool
	}{
		{"the root given", []string{"i-a=" + root}, mockFile, 1, 0, nil},
		{"the root given and one gone", []string{"i-a=" + root, filepath.Join(dir, "gone")}, mockFile, 1, 1, nil},
		// The kernels under root were the made-up agent's, judged
		// against no partition: check said ok, apply skipped its guard.
		{"a root of an agent the config lacks", []string{"i-zz=" + root}, mockFile, 0, 0, func(err error) bool {
			var e *InputError
			return errors.As(err, &e) && strings.Contains(err.Error(), "unknown agent \"i-zz\"; the config's agents are: i-a")
		}},
		{"a bad root", []string{"=" + root}, mockFile, 0, 0, func(err error) bool { var e *InputError; return errors.As(err, &e) }},
		{"a device file gone", []string{root}, filepath.Join(dir, "none.toml"), 0, 0, func(err error) bool { var e *DeviceError; return errors.As(err, &e) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var warn bytes.Buffer
			s := Settings{ScratchRoots: tt.roots, Devices: tt.devices, MockEtcd: etcd, Warn: lineOn(&warn)}
			snap, unseen, err := Scan(context.Background(), s, cfg)
			if tt.err != nil {
				if err == nil || !tt.err(err) || snap != nil {
					t.Fatalf("Scan = %v, %T %v; want another error", snap, err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := len(snap.Kernels()); n != tt.kernels {
				t.Errorf("%d kernels, want %d", n, tt.kernels)
			}
			if len(unseen.Blind) != tt.blind || (tt.blind > 0) != strings.Contains(warn.String(), "gone") {
				t.Errorf("unseen %+v, said %q; want %d blind, said", unseen, warn.String(), tt.blind)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "elsewhere")); err == nil {
		t.Error("the config's root was made")
	}
}

// TestBareRootIsTheConfigsAgent: a bare --scratch-root DIR given with a
// config is the root of the config's agent (the one whose root DIR is, or
// its only one), not a new agent named for the directory: the kernels
// under it were that made-up agent's, the config's agent held none, and
// apply let a partition below what they hold through without --force.
func TestBareRootIsTheConfigsAgent(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "scratches")
	elsewhere := filepath.Join(dir, "copy")
	link := filepath.Join(dir, "link")
	id := "2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8"
	for _, root := range []string{own, elsewhere} {
		testfix.WriteFile(t, root, filepath.Join(id, "config", "resource.txt"),
			"SLOTS={\"cuda.shares\":\"0.5\"}\nCUDA.SHARES_SHARES=c59395cd-ac91-4cd3-a1b0-3d2568aa2d04:0.50\n")
	}
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	cfgPath := testfix.WriteFile(t, dir, "agent.toml", testfix.AgentTOML("[agent]\nid = \"i-a\"\n"+
		"[container]\nscratch-root = \""+own+"\"\n"))
	cfg, err := agentconfig.Load(cfgPath)
	if cfg == nil {
		t.Fatal(err)
	}
	etcd := filepath.Join("..", "inventory", "testdata", "mock-accelerator.etcd.json")
	for _, root := range []string{own, link, elsewhere} {
		t.Run(filepath.Base(root), func(t *testing.T) {
			s := Settings{ScratchRoots: []string{root}, Devices: mockFile, MockEtcd: etcd}
			snap, _, err := Scan(context.Background(), s, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ks := snap.Kernels()
			if len(ks) != 1 || ks[0].Agent != "i-a" {
				for _, k := range ks {
					t.Logf("kernel %s: agent %q", k.ID, k.Agent)
				}
				t.Errorf("Scan: %d kernels, want 1 of agent i-a", len(ks))
			}
			s.Config = cfgPath
			opts, err := Open(s)
			if opts.Inventory != nil {
				defer opts.Inventory.Close()
			}
			if err != nil || len(opts.Roots) != 1 || opts.Roots[0].Agent != "i-a" {
				t.Errorf("Open: roots %+v, %v; want one of agent i-a", opts.Roots, err)
			}
		})
	}
}
