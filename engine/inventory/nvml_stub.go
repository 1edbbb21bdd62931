//go:build !(cgo && linux)

package inventory

// openSystemNVML reports that this build has no NVML: go-nvml needs cgo and
// Linux.
func openSystemNVML(NVMLOptions, *Host) (Source, *InitError, error) {
	return nil, nil, ErrNoNVML
}

// IsNVML reports whether s reads NVML: never in this build.
func IsNVML(Source) bool { return false }
