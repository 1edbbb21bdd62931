package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// ConfigError is a problem with a mock plugin file: which file, which key
// (a path such as "devices[2].numa_node"), and what is wrong.
type ConfigError struct {
	File string
	Key  string // "" for a syntax error
	Line int    // 0 when unknown
	Msg  string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return untrusted.Text(b.String())
}

// MockConfig is a parsed mock-accelerator.toml (domain/backendai.md §4.2),
// validated as the mock plugin's trafaret schemas do: every required key
// present with the right type, extra keys allowed everywhere.
type MockConfig struct {
	Path             string
	SlotName         string // device name: slots are "<SlotName>.device" / ".shares"
	DevicePluginName string
	Devices          []MockDevice
	// Attributes is [attributes] as written (extra_info()); for slot_name
	// "cuda", nvidia_driver and cuda_runtime are filled with the plugin's
	// defaults when absent.
	Attributes map[string]any
	Formats    map[string]MockFormat
}

// MockDevice is one entry of devices.
type MockDevice struct {
	MotherUUID   string
	ModelName    string
	NUMANode     int
	SubprocCount int
	MemoryBytes  int64
	// IsMIG is is_mig_device; the plugin reads it only for slot_name "cuda".
	IsMIG bool
}

// MockFormat is one [formats.<key>] table.
type MockFormat struct {
	HumanReadableName string
	Description       string
	DisplayUnit       string
	DisplayIcon       string
	Binary            bool
	RoundLength       int
}

// IsCUDA reports whether the plugin behaves as the CUDA mock (MIG support,
// is_mig_device mandatory): the plugin keys that on slot_name == "cuda".
func (c *MockConfig) IsCUDA() bool { return c.SlotName == "cuda" }

// DeviceID returns devices[i]'s id as the plugin registers it: mother_uuid,
// or "MIG-<mother_uuid>/<i>/0" for a MIG device.
func (c *MockConfig) DeviceID(i int) model.DeviceID {
	d := c.Devices[i]
	if c.IsCUDA() && d.IsMIG {
		return model.DeviceID(fmt.Sprintf("MIG-%s/%d/0", d.MotherUUID, i))
	}
	return model.DeviceID(d.MotherUUID)
}

// MIGSlot returns the slot of a MIG device: "cuda.device:<model_name after
// the first '-'>-mig" ("MIG-10g" gives "cuda.device:10g-mig").
func (d MockDevice) MIGSlot() model.SlotName {
	_, profile, _ := strings.Cut(d.ModelName, "-")
	return model.SlotName("cuda.device:" + profile + "-mig")
}

// MaxMockFileSize is the largest mock device file or settings file read
// (regular files only, never a device or a FIFO).
const MaxMockFileSize = 16 << 20

// LoadMockConfig reads and validates a mock-accelerator.toml.
func LoadMockConfig(path string) (*MockConfig, error) {
	b, err := safefile.ReadFile(path, MaxMockFileSize)
	if err != nil {
		return nil, fmt.Errorf("read mock accelerator config: %w", err)
	}
	return ParseMockConfig(path, b)
}

// ParseMockConfig validates the TOML text of a mock-accelerator.toml; path
// names it in errors. Errors are *ConfigError.
func ParseMockConfig(path string, data []byte) (*MockConfig, error) {
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &ConfigError{File: path, Line: pe.Position.Line, Msg: "TOML syntax: " + pe.Message}
		}
		return nil, &ConfigError{File: path, Msg: "TOML: " + err.Error()}
	}
	v := validator{file: path}
	cfg := &MockConfig{Path: path}
	cfg.SlotName = v.str(raw, "", "slot_name")
	cfg.DevicePluginName = v.str(raw, "", "device_plugin_name")
	if v.err != nil {
		return nil, v.err
	}
	if cfg.SlotName == "" || strings.ContainsAny(cfg.SlotName, ".: \t") {
		// Slot names are "<slot_name>.<type>": an empty name or one with a
		// separator in it would produce slots nothing can parse back.
		return nil, &ConfigError{File: path, Key: "slot_name", Msg: fmt.Sprintf("must be a non-empty name without '.', ':' or spaces, got %q", cfg.SlotName)}
	}

	devs := v.tableList(raw, "", "devices")
	if v.err != nil {
		return nil, v.err
	}
	for i, d := range devs {
		key := fmt.Sprintf("devices[%d]", i)
		md := MockDevice{
			MotherUUID:   v.str(d, key, "mother_uuid"),
			ModelName:    v.str(d, key, "model_name"),
			NUMANode:     v.intMin(d, key, "numa_node", 0),
			SubprocCount: v.intMin(d, key, "subproc_count", 1),
			MemoryBytes:  v.binarySize(d, key, "memory_size"),
		}
		if cfg.IsCUDA() {
			md.IsMIG = v.toBool(d, key, "is_mig_device")
		}
		if v.err != nil {
			return nil, v.err
		}
		if md.IsMIG && !strings.Contains(md.ModelName, "-") {
			// The plugin takes the MIG profile from model_name.split("-", 1)[1]
			// and would crash on this device.
			return nil, &ConfigError{File: path, Key: key + ".model_name", Msg: fmt.Sprintf("a MIG device's model_name must be \"<anything>-<profile>\" (e.g. \"MIG-10g\"), got %q", md.ModelName)}
		}
		cfg.Devices = append(cfg.Devices, md)
	}
	seen := map[model.DeviceID]int{}
	for i := range cfg.Devices {
		id := cfg.DeviceID(i)
		if j, dup := seen[id]; dup {
			// The plugin would key its alloc map by id and silently drop one.
			return nil, &ConfigError{File: path, Key: fmt.Sprintf("devices[%d].mother_uuid", i), Msg: fmt.Sprintf("device id %q is also devices[%d]'s: device ids must be unique", id, j)}
		}
		seen[id] = i
	}

	cfg.Attributes = v.table(raw, "", "attributes")
	formats := v.table(raw, "", "formats")
	if v.err != nil {
		return nil, v.err
	}
	if cfg.IsCUDA() {
		for _, k := range []struct{ key, def string }{{"nvidia_driver", "450.00.00"}, {"cuda_runtime", "11.0"}} {
			if _, ok := cfg.Attributes[k.key]; !ok {
				cfg.Attributes[k.key] = k.def
				continue
			}
			v.str(cfg.Attributes, "attributes", k.key)
		}
		if v.err != nil {
			return nil, v.err
		}
	}
	cfg.Formats = map[string]MockFormat{}
	for _, name := range sortedKeys(formats) {
		key := "formats." + quoteKey(name)
		f, ok := formats[name].(map[string]any)
		if !ok {
			return nil, &ConfigError{File: path, Key: key, Msg: fmt.Sprintf("must be a table, got %s", tomlType(formats[name]))}
		}
		mf := MockFormat{
			HumanReadableName: v.str(f, key, "human_readable_name"),
			Description:       v.str(f, key, "description"),
			DisplayUnit:       v.str(f, key, "display_unit"),
			DisplayIcon:       v.str(f, key, "display_icon"),
		}
		nf := v.table(f, key, "number_format")
		if v.err == nil {
			mf.Binary = v.boolean(nf, key+".number_format", "binary")
			mf.RoundLength = v.intMin(nf, key+".number_format", "round_length", 0)
		}
		if v.err != nil {
			return nil, v.err
		}
		cfg.Formats[name] = mf
	}
	// Names and ids of the file reach the console: outside text.
	untrusted.Clean(cfg)
	return cfg, nil
}

// validator checks values of a decoded TOML table and keeps the first
// error, so a parse reads as straight-line code.
type validator struct {
	file string
	err  error
}

func (v *validator) fail(prefix, key, format string, args ...any) {
	if v.err != nil {
		return
	}
	v.err = &ConfigError{File: v.file, Key: joinKey(prefix, key), Msg: fmt.Sprintf(format, args...)}
}

func (v *validator) get(m map[string]any, prefix, key string) (any, bool) {
	if v.err != nil {
		return nil, false
	}
	x, ok := m[key]
	if !ok {
		v.fail(prefix, key, "required key is missing")
	}
	return x, ok
}

func (v *validator) str(m map[string]any, prefix, key string) string {
	x, ok := v.get(m, prefix, key)
	if !ok {
		return ""
	}
	s, ok := x.(string)
	if !ok {
		v.fail(prefix, key, "must be a string, got %s", tomlType(x))
	}
	return s
}

func (v *validator) boolean(m map[string]any, prefix, key string) bool {
	x, ok := v.get(m, prefix, key)
	if !ok {
		return false
	}
	b, ok := x.(bool)
	if !ok {
		v.fail(prefix, key, "must be a boolean, got %s", tomlType(x))
	}
	return b
}

// toBool is trafaret's ToBool: a boolean, or one of the strings and numbers
// it converts.
func (v *validator) toBool(m map[string]any, prefix, key string) bool {
	x, ok := v.get(m, prefix, key)
	if !ok {
		return false
	}
	switch t := x.(type) {
	case bool:
		return t
	case int64:
		if t == 0 || t == 1 {
			return t == 1
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "t", "true", "y", "yes", "on", "1":
			return true
		case "f", "false", "n", "no", "off", "0", "none", "null":
			return false
		}
	}
	v.fail(prefix, key, "must be a boolean, got %s", tomlValue(x))
	return false
}

func (v *validator) intMin(m map[string]any, prefix, key string, min int64) int {
	x, ok := v.get(m, prefix, key)
	if !ok {
		return 0
	}
	n, ok := x.(int64)
	if !ok {
		v.fail(prefix, key, "must be an integer >= %d, got %s", min, tomlValue(x))
		return 0
	}
	if n < min || n > math.MaxInt32 {
		v.fail(prefix, key, "must be an integer >= %d, got %d", min, n)
		return 0
	}
	return int(n)
}

// binarySize accepts what the plugin's BinarySize validator does: a size
// string ("40G", "512m", "1.5g": binary units) or a plain byte count.
func (v *validator) binarySize(m map[string]any, prefix, key string) int64 {
	x, ok := v.get(m, prefix, key)
	if !ok {
		return 0
	}
	var n int64
	switch t := x.(type) {
	case int64:
		n = t
	case string:
		d, err := model.ParseFiniteBinarySize(t)
		if err != nil {
			v.fail(prefix, key, "must be a binary size such as \"40G\" or \"512m\", got %q", t)
			return 0
		}
		n, err = d.Int64()
		if err != nil {
			v.fail(prefix, key, "size %q is too large", t)
			return 0
		}
	default:
		v.fail(prefix, key, "must be a binary size such as \"40G\", got %s", tomlValue(x))
		return 0
	}
	if n < 0 {
		v.fail(prefix, key, "must not be negative, got %d bytes", n)
	}
	return n
}

func (v *validator) table(m map[string]any, prefix, key string) map[string]any {
	x, ok := v.get(m, prefix, key)
	if !ok {
		return nil
	}
	t, ok := x.(map[string]any)
	if !ok {
		v.fail(prefix, key, "must be a table, got %s", tomlType(x))
	}
	return t
}

// tableList accepts an array of tables in either TOML spelling
// (devices = [{...}, ...] or [[devices]]).
func (v *validator) tableList(m map[string]any, prefix, key string) []map[string]any {
	x, ok := v.get(m, prefix, key)
	if !ok {
		return nil
	}
	switch t := x.(type) {
	case []map[string]any:
		return t
	case []any:
		out := make([]map[string]any, 0, len(t))
		for i, e := range t {
			tm, ok := e.(map[string]any)
			if !ok {
				v.fail(prefix, fmt.Sprintf("%s[%d]", key, i), "must be a table, got %s", tomlType(e))
				return nil
			}
			out = append(out, tm)
		}
		return out
	}
	v.fail(prefix, key, "must be an array of tables, got %s", tomlType(x))
	return nil
}

func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	if strings.HasPrefix(key, "[") {
		return prefix + key
	}
	return prefix + "." + key
}

// quoteKey quotes a TOML key that is not bare ("*-mig").
func quoteKey(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return strconv.Quote(k)
		}
	}
	return k
}

func tomlType(x any) string {
	switch x.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a table"
	case []any, []map[string]any:
		return "an array"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("a %T", x)
}

// tomlValue describes a scalar for an error message.
func tomlValue(x any) string {
	switch t := x.(type) {
	case string:
		return fmt.Sprintf("%q", t)
	case int64, float64, bool:
		return fmt.Sprintf("%s %v", tomlType(x), t)
	}
	return tomlType(x)
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Allocation modes of the mock plugin (etcd allocation_mode).
const (
	ModeDiscrete   = "discrete"
	ModeFractional = "fractional"
)

// Mock plugin limits and defaults (domain/backendai.md §4.3).
const (
	DefaultUnitMem        = 2 << 30   // 2 GiB
	MinUnitMem            = 512 << 20 // 512 MiB
	DefaultUnitProc       = 8
	MinUnitProc           = 2
	DefaultReservedMemory = 64 << 20 // 64 MiB, fractional mode only
)

// MockSettings are the mock plugin's runtime settings, which Backend.AI
// keeps in etcd under config/plugins/accelerator/mock/ (§4.3).
type MockSettings struct {
	// Path of the JSON file they came from, or the etcd prefix they were
	// read from ("" for the defaults).
	Path string
	// Unread says why the settings in the agent's etcd could not be
	// read; the plugin's defaults stand in for them.
	Unread string
	// AllocationMode is allocation_mode as given. When it is not set
	// (AllocationModeSet false) the plugin uses discrete mode and logs a
	// warning; any value other than "discrete" and "fractional" disables
	// the plugin.
	AllocationMode    string
	AllocationModeSet bool
	UnitMem           int64
	UnitProc          int
	QuantumSize       model.Dec
	// ReservedMemory is 0 in discrete mode, as in the plugin.
	ReservedMemory int64
	// DeviceMask only hides the masked devices' statistics in the mock;
	// they are still listed and allocatable.
	DeviceMask []model.DeviceID
}

// DefaultMockSettings are the plugin's settings when etcd holds none.
func DefaultMockSettings() *MockSettings {
	return &MockSettings{
		UnitMem:     DefaultUnitMem,
		UnitProc:    DefaultUnitProc,
		QuantumSize: model.MustDec("0.1"),
	}
}

// Mode returns the effective allocation mode: "discrete" when unset, ""
// when the value is invalid (the plugin is then disabled).
func (s *MockSettings) Mode() string {
	if !s.AllocationModeSet {
		return ModeDiscrete
	}
	switch s.AllocationMode {
	case ModeDiscrete, ModeFractional:
		return s.AllocationMode
	}
	return ""
}

// Shares returns a device's capacity in fractional mode (§4.4):
// min(memory/unit_mem, subproc/unit_proc) rounded down to 0.01. The plugin
// divides in floating point and converts the float to a Decimal exactly
// before rounding, so a ratio such as 0.29 (a binary 0.28999…) gives 0.28;
// this does the same.
func (s *MockSettings) Shares(memoryBytes int64, subprocCount int) model.Dec {
	mem := float64(memoryBytes) / float64(s.UnitMem)
	proc := float64(subprocCount) / float64(s.UnitProc)
	return floorHundredths(math.Min(mem, proc))
}

// floorHundredths is Decimal(f).quantize(Decimal(".01"), ROUND_DOWN) for a
// finite float: exact, since big.Float holds the float64 exactly.
func floorHundredths(f float64) model.Dec {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return model.Zero
	}
	x := new(big.Float).SetPrec(256).SetFloat64(f)
	x.Mul(x, big.NewFloat(100))
	// Truncation toward zero is ROUND_DOWN. The ratio of an int64 to at
	// least 512 MiB or 2 is far below 2^62/100, so the result fits.
	i, _ := x.Int64()
	return model.NewDec(i, -2)
}

// MockSettingsFromEtcd reads the settings as etcd holds them: kv are the
// keys under config/plugins/accelerator/mock/ (plugin.ReadEtcdFlat), where
// names that prefix for messages. They are checked as ParseMockSettings
// checks a file.
func MockSettingsFromEtcd(where string, kv map[string]string) (*MockSettings, error) {
	obj := make(map[string]string, len(kv))
	for k, v := range kv {
		obj[k] = v
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, &ConfigError{File: where, Msg: err.Error()}
	}
	return ParseMockSettings(where, b)
}

// UnreadMockSettings are the plugin's defaults standing in for settings
// that could not be read from the agent's etcd (why).
func UnreadMockSettings(why string) *MockSettings {
	s := DefaultMockSettings()
	s.Unread = why
	return s
}

// LoadMockSettings reads the mock plugin's etcd settings from a JSON file.
func LoadMockSettings(path string) (*MockSettings, error) {
	b, err := safefile.ReadFile(path, MaxMockFileSize)
	if err != nil {
		return nil, fmt.Errorf("read mock plugin settings: %w", err)
	}
	return ParseMockSettings(path, b)
}

// ParseMockSettings reads the plugin's settings from JSON, either as an etcd
// dump ({"config":{"plugins":{"accelerator":{"mock":{...}}}}}) or as the
// inner object alone. Values may be strings (as etcd stores them) or JSON
// numbers. Missing keys take the plugin's defaults; invalid values are
// errors where the plugin would fail to start (unit_mem below 512 MiB,
// unit_proc below 2, unparsable numbers). Errors are *ConfigError.
func ParseMockSettings(path string, data []byte) (*MockSettings, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, &ConfigError{File: path, Msg: "JSON: " + err.Error()}
	}
	if dec.More() {
		return nil, &ConfigError{File: path, Msg: "JSON: trailing data after the object"}
	}
	obj := top
	prefix := ""
	if c, ok := top["config"]; ok {
		cur, key := c, "config"
		for _, k := range []string{"plugins", "accelerator", "mock"} {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, &ConfigError{File: path, Key: key, Msg: "must be an object"}
			}
			next, ok := m[k]
			if !ok {
				msg := fmt.Sprintf("no %q object", k)
				if k == "mock" {
					// §4.3: the plugin reads under its entry-point name; the
					// rst documentation's <slot_name> is wrong.
					if _, cuda := m["cuda"]; cuda {
						msg += ` (found "cuda": the mock plugin reads its settings under its entry-point name "mock", not the slot name)`
					}
				}
				return nil, &ConfigError{File: path, Key: key, Msg: msg}
			}
			cur, key = next, key+"."+k
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, &ConfigError{File: path, Key: key, Msg: "must be an object"}
		}
		obj, prefix = m, key
	}
	s := DefaultMockSettings()
	s.Path = path
	fail := func(key, format string, args ...any) error {
		return &ConfigError{File: path, Key: joinKey(prefix, key), Msg: fmt.Sprintf(format, args...)}
	}
	// number records whether the last scalar was a JSON number: Python's
	// int() truncates a float but rejects the string "8.5".
	number := false
	scalar := func(key string) (string, bool, error) {
		number = false
		x, ok := obj[key]
		if !ok || x == nil {
			// The plugin reads settings with .get(): null is unset.
			return "", false, nil
		}
		switch t := x.(type) {
		case string:
			return t, true, nil
		case json.Number:
			number = true
			return t.String(), true, nil
		}
		return "", false, fail(key, "must be a string or a number, got %s", jsonType(x))
	}

	if raw, ok, err := scalar("allocation_mode"); err != nil {
		return nil, err
	} else if ok {
		s.AllocationMode, s.AllocationModeSet = raw, true
	}
	if raw, ok, err := scalar("unit_mem"); err != nil {
		return nil, err
	} else if ok {
		d, perr := model.ParseFiniteBinarySize(raw)
		var n int64
		if perr == nil {
			n, perr = d.Int64()
		}
		if perr != nil {
			return nil, fail("unit_mem", "must be a binary size such as \"2g\", got %q", raw)
		}
		if n < MinUnitMem {
			return nil, fail("unit_mem", "%s is below the plugin's minimum of 512 MiB: the agent would refuse to start (\"too small unit_mem\")", raw)
		}
		s.UnitMem = n
	}
	if raw, ok, err := scalar("unit_proc"); err != nil {
		return nil, err
	} else if ok {
		n, perr := pyInt(raw, number)
		if perr != nil {
			return nil, fail("unit_proc", "must be an integer, got %q", raw)
		}
		if n < MinUnitProc {
			return nil, fail("unit_proc", "%d is below the plugin's minimum of 2: the agent would refuse to start (\"too small unit_proc\")", n)
		}
		s.UnitProc = int(n)
	}
	if raw, ok, err := scalar("quantum_size"); err != nil {
		return nil, err
	} else if ok {
		q, perr := model.ParseDec(raw)
		if perr != nil || !q.IsFinite() || q.Sign() <= 0 {
			return nil, fail("quantum_size", "must be a positive decimal such as \"0.1\", got %q", raw)
		}
		s.QuantumSize = q
	}
	if s.Mode() == ModeFractional {
		s.ReservedMemory = DefaultReservedMemory
		if raw, ok, err := scalar("reserved_memory"); err != nil {
			return nil, err
		} else if ok {
			n, perr := pyInt(raw, number)
			if perr != nil || n < 0 {
				return nil, fail("reserved_memory", "must be a byte count such as \"67108864\", got %q", raw)
			}
			s.ReservedMemory = n
		}
	}
	if x, ok := obj["device_mask"]; ok && x != nil {
		switch t := x.(type) {
		case string:
			for _, id := range strings.Split(t, ",") {
				s.DeviceMask = append(s.DeviceMask, model.DeviceID(id))
			}
		case []any:
			for i, e := range t {
				id, ok := e.(string)
				if !ok {
					return nil, fail(fmt.Sprintf("device_mask[%d]", i), "must be a string")
				}
				s.DeviceMask = append(s.DeviceMask, model.DeviceID(id))
			}
		default:
			return nil, fail("device_mask", "must be a comma-separated string of device ids, got %s", jsonType(x))
		}
	}
	untrusted.Clean(s)
	return s, nil
}

// pyInt is Python's int() of a setting: an integer string (surrounding
// space and digit-separating underscores allowed), or, for a JSON number, a
// float truncated toward zero as int(float) does.
func pyInt(s string, number bool) (int64, error) {
	t := strings.TrimSpace(s)
	if !number {
		t = strings.ReplaceAll(t, "_", "")
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		return n, nil
	}
	if number {
		f, err := strconv.ParseFloat(t, 64)
		if err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) < 1<<62 {
			return int64(f), nil
		}
	}
	return 0, fmt.Errorf("invalid integer %q", s)
}

func jsonType(x any) string {
	switch x.(type) {
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return "null"
}
