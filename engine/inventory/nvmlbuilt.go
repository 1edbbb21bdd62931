//go:build cgo && linux

package inventory

// NVMLBuilt reports whether this binary has NVML support compiled in
// (go-nvml needs cgo on Linux); `fgtop version` shows it, so that an
// operator can tell a CGO_ENABLED=0 build from a node without a driver.
const NVMLBuilt = true
