package nodeopen

import (
	"context"
	"os"
	"time"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/model"
)

// mockRetry is how often a live command reads the mock plugin's settings
// again while they could not be read.
const mockRetry = 10 * time.Second

// ParseHost reads --host-cpus and --host-mem (empty: this host's) into
// the host's cores and memory; a list or size that cannot be read, an
// empty list or a size under a byte is an *InputError.
func ParseHost(cpus, mem string) (inventory.HostOptions, error) {
	var host inventory.HostOptions
	if cpus != "" {
		list, err := inventory.ParseCPUList(cpus)
		if err != nil {
			return host, inputErr("--host-cpus %q: %v (want a list such as 0-63 or 0-7,16)", cpus, err)
		}
		if len(list) == 0 {
			return host, inputErr("--host-cpus %q: the list is empty", cpus)
		}
		host.CPUs = list
	}
	if mem != "" {
		b, err := model.ParseFiniteBinarySize(mem)
		if err != nil {
			return host, inputErr("--host-mem %q: %v (want a size such as 512g)", mem, err)
		}
		n, err := b.Int64()
		if err != nil || n <= 0 {
			return host, inputErr("--host-mem %q: want a positive size such as 512g", mem)
		}
		host.MemBytes = n
	}
	return host, nil
}

// CheckMockEtcd refuses a --mock-etcd file where devices reads no mock
// file.
func CheckMockEtcd(devices, mockEtcd string) error {
	if nvmlDevices(devices) && mockEtcd != "" {
		return inputErr("--mock-etcd %s: the mock plugin's settings apply only with --devices PATH-to-mock-accelerator.toml, not --devices %s", mockEtcd, devices)
	}
	return nil
}

// mockSettingsOfEtcd is the mock plugin's settings as its agents read
// them from the etcd pc names (plugin.ReadMockSettings), for a devices
// that is a mock-accelerator.toml given no --mock-etcd: nil for another
// source, one that does not exist (said at once by its open, not after
// etcd's timeout) or no etcd. A value the plugin refuses is an
// *InputError.
func mockSettingsOfEtcd(ctx context.Context, devices string, pc ConfigPlugins) (*inventory.MockSettings, error) {
	if nvmlDevices(devices) || !pc.hasEtcd() {
		return nil, nil
	}
	if _, err := os.Stat(devices); err != nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*EtcdTimeout)
	defer cancel()
	s, err := plugin.ReadMockSettings(ctx, pc.etcdOptions())
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return s, nil
}

// OpenInventory opens s's device source, with the host's cores and memory
// replaced by s.HostCPUs and s.HostMem when given, the mock's settings
// read from etcd when no --mock-etcd names them, and NVML's GPUs
// registered as the node's CUDA plugin does (pc: what agent.toml says
// about the plugins; roots: the scratch roots, for the kernels'
// evidence). A source that cannot be opened is a *DeviceError.
func OpenInventory(s Settings, pc ConfigPlugins, roots []string) (inventory.Source, error) {
	p, err := ParsePlugin(s.Plugin, s.Devices)
	if err != nil {
		return nil, err
	}
	host, err := ParseHost(s.HostCPUs, s.HostMem)
	if err != nil {
		return nil, err
	}
	if err := CheckMockEtcd(s.Devices, s.MockEtcd); err != nil {
		return nil, err
	}
	oo := inventory.OpenOptions{MockEtcdPath: s.MockEtcd, Host: host}
	if s.MockEtcd == "" {
		ms, err := mockSettingsOfEtcd(context.Background(), s.Devices, pc)
		if err != nil {
			return nil, err
		}
		oo.MockSettings = ms
	}
	src, err := inventory.Open(s.Devices, oo)
	if err != nil {
		return nil, &DeviceError{Err: err}
	}
	if ms, ok := src.(*inventory.MockSource); ok && s.Live && oo.MockSettings != nil {
		// A console, serve or exporter started while etcd was down
		// reads again until it can, as the CUDA plugin's reader does.
		devices := s.Devices
		ms.RetryUnread(mockRetry, func(ctx context.Context) *inventory.MockSettings {
			s, err := mockSettingsOfEtcd(ctx, devices, pc)
			if err != nil {
				return nil
			}
			return s
		})
	}
	return WrapPlugin(src, p, pc, roots), nil
}
