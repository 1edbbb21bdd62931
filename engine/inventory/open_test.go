package inventory

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func TestOpenMock(t *testing.T) {
	src, err := Open(fixtureTOML, OpenOptions{MockEtcdPath: fixtureEtcd})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	inv := poll(t, src)
	if inv.Source.Kind != KindMock || len(accelerators(inv)) != 4 || inv.HostMemBytes <= 0 {
		t.Errorf("source %+v, %d accelerators, host mem %d", inv.Source, len(accelerators(inv)), inv.HostMemBytes)
	}
	last := inv.Devices[len(inv.Devices)-1]
	if last.Key() != (model.DeviceKey{Name: "mem", ID: "root"}) || inv.Devices[4].Name != "cpu" {
		t.Errorf("order: accelerators, cpus, mem; got %v ... %v", inv.Devices[4].Key(), last.Key())
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		spec, etcd, want string
	}{
		{"auto", fixtureEtcd, "--mock-etcd applies only"},
		{"nvml", fixtureEtcd, "--mock-etcd applies only"},
		{"testdata/nope.toml", "", "want auto, nvml or the path"},
		{fixtureTOML, "testdata/nope.json", "read mock plugin settings"},
		{"testdata", "", "read mock accelerator config"},
	}
	for _, tc := range tests {
		_, err := Open(tc.spec, OpenOptions{MockEtcdPath: tc.etcd})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q, %q) = %v, want %q", tc.spec, tc.etcd, err, tc.want)
		}
	}
	_, err := Open("testdata/nope.toml", OpenOptions{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v does not wrap fs.ErrNotExist", err)
	}
}

// TestOpenAuto runs against whatever this machine has: with no NVIDIA
// driver (or no NVML in the build) auto falls back to the host's devices.
func TestOpenAuto(t *testing.T) {
	src, err := Open("auto", OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	inv := poll(t, src)
	if inv.Source.Kind == KindNVML {
		t.Skipf("NVML works here: %s", inv.Source.Detail)
	}
	if inv.Source.Kind != KindNone || inv.Source.Health != HealthUnavailable || len(accelerators(inv)) != 0 {
		t.Errorf("source %+v", inv.Source)
	}
	if len(inv.Issues) == 0 || inv.Issues[0].Code != model.IssueDeviceSource || inv.Issues[0].Severity != model.SevInfo {
		t.Errorf("issues %v", inv.Issues)
	}
	if inv.HostMemBytes <= 0 || inv.SlotTypes["cpu"] != "count" || inv.SlotTypes["mem"] != "bytes" {
		t.Errorf("host part: mem %d, slot types %v", inv.HostMemBytes, inv.SlotTypes)
	}
}
