//go:build !(cgo && linux)

package inventory

// NVMLBuilt reports whether this binary has NVML support compiled in: not
// in this build (no cgo, or not Linux).
const NVMLBuilt = false
