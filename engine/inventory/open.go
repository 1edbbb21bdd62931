package inventory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fgtop/fgtop/model"
)

// OpenOptions configures Open.
type OpenOptions struct {
	// MockEtcdPath is --mock-etcd: the mock plugin's etcd settings as JSON.
	// It only applies to a mock-accelerator.toml.
	MockEtcdPath string
	// MockSettings, without MockEtcdPath, are the mock plugin's settings
	// as read from the agent's etcd (MockSettingsFromEtcd,
	// UnreadMockSettings); nil: the plugin's defaults.
	MockSettings *MockSettings
	NVML         NVMLOptions
	Host         HostOptions
}

// Open implements the command line's --devices contract:
//
//   - "auto" (or ""): NVML if it initialises; otherwise the host's CPU cores
//     and memory only (Source Kind "none", Health "unavailable"), with the
//     classified NVML failure as an Issue (info when the library is simply
//     absent, as on a CPU-only node; error for anything else). A build
//     without NVML behaves as if the library were absent.
//   - "nvml": NVML, and nothing else. If Init fails the source still works,
//     listing the host's devices with Kind "nvml", Health "unavailable" and
//     the failure as an error Issue. A build without NVML returns ErrNoNVML.
//   - anything else: the path of a mock-accelerator.toml, read with
//     MockEtcdPath's settings; a file named "auto" or "nvml" needs "./".
//
// Every source includes the host's CPU cores and memory. An error means bad
// input (an unreadable or invalid mock file, --mock-etcd without one).
func Open(spec string, opts OpenOptions) (Source, error) {
	host := NewHost(opts.Host)
	switch spec {
	case "", "auto", "nvml":
		if opts.MockEtcdPath != "" {
			return nil, errors.New("--mock-etcd applies only to --devices PATH-to-mock-accelerator.toml")
		}
	}
	switch spec {
	case "", "auto":
		src, initErr, err := openSystemNVML(opts.NVML, host)
		if err != nil {
			return NewHostOnly(host, "built without NVML support; host CPU and memory only", model.Issue{
				Severity: model.SevInfo, Code: model.IssueDeviceSource,
				Message: "fgtop was built without NVML support (cgo disabled, or not Linux): GPUs are not read; showing host CPU and memory only",
			}), nil
		}
		if initErr != nil {
			// Close after a failed Init touches nothing in NVML.
			_ = src.Close()
			sev := model.SevError
			if initErr.Reason == InitLibraryNotFound {
				// The normal state of a node without NVIDIA GPUs.
				sev = model.SevInfo
			}
			return NewHostOnly(host, "no GPU source: "+initErr.short()+"; host CPU and memory only", initErr.Issue(sev)), nil
		}
		return src, nil
	case "nvml":
		src, _, err := openSystemNVML(opts.NVML, host)
		if err != nil {
			return nil, err
		}
		return src, nil
	}
	if _, err := os.Stat(spec); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("want auto, nvml or the path of a mock-accelerator.toml: %w", err)
	}
	if opts.MockEtcdPath == "" && opts.MockSettings != nil {
		cfg, err := LoadMockConfig(spec)
		if err != nil {
			return nil, err
		}
		return NewMockFromConfig(cfg, opts.MockSettings, host), nil
	}
	src, err := NewMock(spec, opts.MockEtcdPath, host)
	if err != nil {
		return nil, err
	}
	return src, nil
}
