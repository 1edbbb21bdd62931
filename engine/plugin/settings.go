// Package plugin mirrors the Backend.AI CUDA plugin a node's agents run:
// which one it is (cuda_open or the fractional fGPU plugin), its settings
// as the agent reads them from etcd (config/plugins/accelerator/cuda/,
// the node scope over the global one), and the devices it registers from
// the GPUs NVML lists: ids, slot and capacity (domain notes §10).
//
// The fractional plugin is closed source. Its capacity rule is assumed to
// be the open-source mock plugin's: min(memory / unit_mem, SMs / unit_proc)
// rounded down to 0.01; an operator overrides it with --fgpu-capacity.
package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// EntryPoint is the CUDA plugin's entry-point name, the last component of
// its settings prefix config/plugins/accelerator/<name>/ (both the open
// and the fractional plugin register as "cuda").
const EntryPoint = "cuda"

// Allocation modes (the allocation_mode setting).
const (
	ModeDiscrete   = "discrete"
	ModeFractional = "fractional"
)

// Defaults and limits of the settings (the mock plugin's, assumed for the
// fractional plugin; domain notes §4.3).
const (
	DefaultUnitMem  = 2 << 30   // 2 GiB
	MinUnitMem      = 512 << 20 // 512 MiB
	DefaultUnitProc = 8
	MinUnitProc     = 2
)

// DefaultQuantum is the mock plugin's quantum_size default.
var DefaultQuantum = model.NewDec(1, -1)

// Size bounds on outside input: a settings document, a value, a mask.
const (
	MaxSettingsBytes = 1 << 20
	MaxValueBytes    = 4 << 10
	MaxMaskItems     = 1024
)

// Settings are a CUDA plugin's settings, as read from etcd or a file.
// The zero value is "nothing set".
type Settings struct {
	// Raw holds every value as read, by its key relative to the plugin's
	// prefix ("unit_mem", "nested/key"), for display.
	Raw map[string]string
	// AllocationMode is allocation_mode as given ("" when unset).
	AllocationMode string
	// UnitMem (bytes) and UnitProc: the share unit; the defaults when
	// unset.
	UnitMem  int64
	UnitProc int64
	// Quantum is quantum_size (DefaultQuantum when unset).
	Quantum model.Dec
	// DeviceMask is device_mask split at commas, spaces trimmed, empty
	// items dropped: the fractional plugin's items (assumed).
	DeviceMask []string
	// OpenMask is device_mask as cuda_open reads it: split at commas and
	// nothing else (raw_device_mask.split(",")), each item compared with
	// a GPU's bare UUID exactly, so " <uuid>" or "GPU-<uuid>" masks no
	// GPU there.
	OpenMask []string
	// Problems are values that cannot be used; a problem with unit_mem or
	// unit_proc makes fractional capacities unknown (BadUnits).
	Problems []string
	// BadUnits: unit_mem or unit_proc is unusable.
	BadUnits bool
	// BadQuantum: quantum_size is set but not a positive decimal; Quantum
	// is then not the plugin's (it would not load with it).
	BadQuantum bool
}

// parsedKeys are the keys Parse reads; every other key is only kept in
// Raw. The etcd watch parses only these on a change (parseClean).
var parsedKeys = [...]string{"allocation_mode", "unit_mem", "unit_proc", "quantum_size", "device_mask"}

// parseClean is Parse of kv whose keys and values are already through
// untrusted.Text, without copying or scanning what Parse does not read:
// kv becomes Raw, so the caller hands over a map it no longer changes.
func parseClean(kv map[string]string) *Settings {
	known := make(map[string]string, len(parsedKeys))
	for _, k := range parsedKeys {
		if v, ok := kv[k]; ok {
			known[k] = v
		}
	}
	s := Parse(known)
	s.Raw = kv
	return s
}

// Parse reads the plugin's settings from flattened key/value pairs, keys
// relative to config/plugins/accelerator/cuda/ (already unquoted). Missing
// keys take the defaults; a bad value is a Problem and its default is not
// silently used for capacities (BadUnits).
//
// Keys and values enter through untrusted.Text: whoever can write to etcd
// (or the --plugin-config file) must not reach the operator's terminal
// through an issue that quotes them (device_mask items, settings that
// differ between agents).
func Parse(kv map[string]string) *Settings {
	s := &Settings{Raw: make(map[string]string, len(kv)), UnitMem: DefaultUnitMem, UnitProc: DefaultUnitProc, Quantum: DefaultQuantum}
	if !allSafe(kv) {
		clean := make(map[string]string, len(kv))
		for k, v := range kv {
			clean[untrusted.Text(k)] = untrusted.Text(v)
		}
		kv = clean
	}
	for k, v := range kv {
		s.Raw[k] = v
	}
	bad := func(key, val, format string, a ...any) {
		s.Problems = append(s.Problems, fmt.Sprintf("%s = %q: %s", key, clip(val), fmt.Sprintf(format, a...)))
	}
	if v, ok := kv["allocation_mode"]; ok {
		m := strings.TrimSpace(v)
		switch m {
		case ModeDiscrete, ModeFractional:
			s.AllocationMode = m
		default:
			bad("allocation_mode", v, "want %q or %q", ModeDiscrete, ModeFractional)
		}
	}
	if v, ok := kv["unit_mem"]; ok {
		n, err := parseSize(v)
		switch {
		case err != nil:
			bad("unit_mem", v, "%v (want a size such as 2g)", err)
			s.BadUnits = true
		case n < MinUnitMem:
			bad("unit_mem", v, "below the minimum of 512m")
			s.BadUnits = true
		default:
			s.UnitMem = n
		}
	}
	if v, ok := kv["unit_proc"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch {
		case err != nil || len(v) > 20:
			bad("unit_proc", v, "not a whole number")
			s.BadUnits = true
		case n < MinUnitProc:
			bad("unit_proc", v, "below the minimum of %d", MinUnitProc)
			s.BadUnits = true
		default:
			s.UnitProc = n
		}
	}
	if v, ok := kv["quantum_size"]; ok {
		d, err := model.ParseDec(strings.TrimSpace(v))
		if err != nil || d.Sign() <= 0 || len(v) > 64 {
			bad("quantum_size", v, "want a positive decimal such as 0.1")
			s.BadQuantum = true
		} else {
			s.Quantum = d
		}
	}
	if v, ok := kv["device_mask"]; ok {
		for _, item := range strings.Split(v, ",") {
			if item != "" && len(s.OpenMask) < MaxMaskItems {
				s.OpenMask = append(s.OpenMask, item)
			}
			if item = strings.TrimSpace(item); item != "" && len(s.DeviceMask) < MaxMaskItems {
				s.DeviceMask = append(s.DeviceMask, item)
			}
		}
	}
	sort.Strings(s.Problems)
	return s
}

func allSafe(kv map[string]string) bool {
	for k, v := range kv {
		if !untrusted.Safe(k) || !untrusted.Safe(v) {
			return false
		}
	}
	return true
}

// parseSize reads a binary size ("20g", "512m", "2147483648").
func parseSize(v string) (int64, error) {
	if len(v) > 64 {
		return 0, errors.New("too long")
	}
	d, err := model.ParseFiniteBinarySize(strings.TrimSpace(v))
	if err != nil {
		return 0, err
	}
	n, err := d.Int64()
	if err != nil {
		return 0, errors.New("out of range")
	}
	return n, nil
}

// clip shortens s to at most 40 bytes, at a rune boundary: a cut rune
// would be a stray byte on the operator's terminal.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// Fractional reports whether allocation_mode says fractional.
func (s *Settings) Fractional() bool { return s != nil && s.AllocationMode == ModeFractional }

// Equal reports whether two readings hold the same values.
func (s *Settings) Equal(o *Settings) bool {
	if s == nil || o == nil {
		return s == o
	}
	if len(s.Raw) != len(o.Raw) {
		return false
	}
	for k, v := range s.Raw {
		if w, ok := o.Raw[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// String spells the values as key=value pairs, sorted.
func (s *Settings) String() string {
	if s == nil || len(s.Raw) == 0 {
		return "(none set: defaults)"
	}
	keys := make([]string, 0, len(s.Raw))
	for k := range s.Raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + clip(s.Raw[k])
	}
	return strings.Join(parts, " ")
}

// Capacity is the assumed fractional rule for one GPU:
// min(memBytes / unit_mem, sms / unit_proc) rounded down to 0.01, in exact
// integer arithmetic. ok is false when it cannot be computed (no memory
// size, no SM count, or unusable units).
func (s *Settings) Capacity(memBytes int64, sms int) (model.Dec, bool) {
	if s == nil || s.BadUnits || memBytes <= 0 || sms <= 0 || s.UnitMem <= 0 || s.UnitProc <= 0 {
		return model.Zero, false
	}
	// floor(100·a/b) for each bound, then the smaller one.
	hund := func(a, b int64) *big.Int {
		x := new(big.Int).Mul(big.NewInt(a), big.NewInt(100))
		return x.Quo(x, big.NewInt(b))
	}
	m, p := hund(memBytes, s.UnitMem), hund(int64(sms), s.UnitProc)
	if p.Cmp(m) < 0 {
		m = p
	}
	return model.NewDec(m.Int64(), -2), true
}

// ParseFile reads --plugin-config: the shape of config/plugins/accelerator
// in JSON or TOML, {"cuda": {"allocation_mode": ..., "unit_mem": ...}}.
// Values may be strings (as etcd keeps them), numbers or booleans; a
// nested table is flattened to "a/b" keys. The document may also be the
// whole tree from etcd's root ({"config": {"plugins": {"accelerator":
// {"cuda": ...}}}}).
func ParseFile(path string, data []byte) (*Settings, error) {
	if len(data) > MaxSettingsBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxSettingsBytes)
	}
	var top map[string]any
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&top); err != nil {
			return nil, fmt.Errorf("%s: JSON: %v", path, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s: JSON: trailing data after the object", path)
		}
	} else if err := toml.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: neither a JSON object nor TOML: %v", path, err)
	}
	obj := any(top)
	where := ""
	if _, ok := top[EntryPoint]; !ok {
		if _, ok := top["config"]; ok {
			for _, k := range []string{"config", "plugins", "accelerator"} {
				m, _ := obj.(map[string]any)
				obj = m[k]
				where += k + "."
			}
		}
	}
	m, _ := obj.(map[string]any)
	cuda, ok := m[EntryPoint]
	if !ok {
		return nil, fmt.Errorf("%s: no %q table (want the shape of config/plugins/accelerator: {\"cuda\": {\"allocation_mode\": ..., \"unit_mem\": ...}})", path, where+EntryPoint)
	}
	tbl, ok := cuda.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: %s must be a table of settings", path, where+EntryPoint)
	}
	kv := map[string]string{}
	if err := flatten("", tbl, kv, 0); err != nil {
		return nil, fmt.Errorf("%s: %s: %v", path, where+EntryPoint, err)
	}
	return Parse(kv), nil
}

// flatten turns nested tables into "a/b" keys with etcd's string values.
func flatten(prefix string, t map[string]any, out map[string]string, depth int) error {
	if depth > 16 {
		return errors.New("nested too deeply")
	}
	for k, v := range t {
		key := k
		if prefix != "" {
			key = prefix + "/" + k
		}
		switch x := v.(type) {
		case map[string]any:
			if err := flatten(key, x, out, depth+1); err != nil {
				return err
			}
		case string:
			out[key] = x
		case json.Number:
			out[key] = x.String()
		case bool:
			// Python's str(True), as the agent's etcd writer stores it.
			out[key] = map[bool]string{true: "True", false: "False"}[x]
		case int64:
			out[key] = strconv.FormatInt(x, 10)
		case float64:
			out[key] = strconv.FormatFloat(x, 'f', -1, 64)
		case []any:
			// device_mask written as a list: etcd holds it comma-joined.
			parts := make([]string, 0, len(x))
			for _, it := range x {
				parts = append(parts, fmt.Sprint(it))
			}
			out[key] = strings.Join(parts, ",")
		default:
			return fmt.Errorf("%s: unsupported value %v", key, v)
		}
	}
	return nil
}
