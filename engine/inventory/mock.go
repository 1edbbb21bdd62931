package inventory

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fgtop/fgtop/model"
)

// MockSource lists the devices Backend.AI's mock accelerator plugin would
// register for a mock-accelerator.toml and its etcd settings, plus the
// host's CPU cores and memory. Mock devices have no telemetry
// (Device.Telemetry is nil).
//
// The plugin reads its config once at start, and so does MockSource: the
// accelerator part is computed once and every Poll shares it (once more
// where settings that could not be read at start are read later:
// RetryUnread).
type MockSource struct {
	cfg      *MockConfig
	settings *MockSettings
	host     *Host
	acc      *accel

	mu       sync.Mutex
	lastHost *HostInfo
	last     *Inventory
	// stop ends RetryUnread's reads (Close).
	stop     chan struct{}
	stopOnce sync.Once
}

// NewMock reads a mock-accelerator.toml and, if etcdJSONPath is not empty,
// the plugin's etcd settings (see ParseMockSettings; a failure there is a
// *MockSettingsError); without them the
// plugin's defaults apply (discrete mode). host supplies the CPU and memory
// devices; nil means none.
func NewMock(tomlPath, etcdJSONPath string, host *Host) (*MockSource, error) {
	cfg, err := LoadMockConfig(tomlPath)
	if err != nil {
		return nil, err
	}
	settings := DefaultMockSettings()
	if etcdJSONPath != "" {
		if settings, err = LoadMockSettings(etcdJSONPath); err != nil {
			return nil, &MockSettingsError{Path: etcdJSONPath, Err: err}
		}
	}
	return NewMockFromConfig(cfg, settings, host), nil
}

// MockSettingsError is a failure reading the mock plugin's etcd settings
// file rather than the mock-accelerator.toml, so that the command line can
// name the flag the file came from (--mock-etcd, not --devices).
type MockSettingsError struct {
	// Path is the settings file.
	Path string
	// Err is the read or parse error; it names the file already.
	Err error
}

func (e *MockSettingsError) Error() string { return e.Err.Error() }
func (e *MockSettingsError) Unwrap() error { return e.Err }

// NewMockFromConfig builds a MockSource from parsed files (the demo node
// uses embedded ones). settings nil means the plugin's defaults.
func NewMockFromConfig(cfg *MockConfig, settings *MockSettings, host *Host) *MockSource {
	if settings == nil {
		settings = DefaultMockSettings()
	}
	return &MockSource{cfg: cfg, settings: settings, host: host, acc: mockDevices(cfg, settings), stop: make(chan struct{})}
}

// Config returns the parsed mock-accelerator.toml.
func (m *MockSource) Config() *MockConfig { return m.cfg }

// Settings returns the plugin settings in effect.
func (m *MockSource) Settings() *MockSettings {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.settings
}

// RetryUnread reads settings that could not be read at start
// (UnreadMockSettings) again every period, until read gives settings it
// read or the source is closed; the devices are then registered with them
// from the next Poll on. A console, serve or exporter started while etcd
// was down kept the defaults' guess for its whole life. It does nothing
// for settings that were read.
func (m *MockSource) RetryUnread(period time.Duration, read func(context.Context) *MockSettings) {
	m.mu.Lock()
	unread := m.settings.Unread != ""
	m.mu.Unlock()
	if !unread || read == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-m.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
			s := read(ctx)
			if s == nil || s.Unread != "" {
				continue
			}
			m.mu.Lock()
			m.settings, m.acc, m.last = s, mockDevices(m.cfg, s), nil
			m.mu.Unlock()
			return
		}
	}()
}

// Poll returns the mock devices and the host's. Only the host part is ever
// re-read.
func (m *MockSource) Poll(ctx context.Context) (*Inventory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var hi *HostInfo
	if m.host != nil {
		hi = m.host.Read()
	}
	if m.last == nil || hi != m.lastHost {
		m.last = assemble(m.acc, hi)
		m.lastHost = hi
	}
	inv := *m.last
	return &inv, nil
}

// Close ends RetryUnread's reads; the mock holds nothing else.
func (m *MockSource) Close() error {
	m.stopOnce.Do(func() { close(m.stop) })
	return nil
}

// mockDevices computes what the plugin registers (list_devices,
// create_alloc_map, slot_types), once.
func mockDevices(cfg *MockConfig, s *MockSettings) *accel {
	a := &accel{
		slotTypes: model.SlotTypes{},
		source:    model.SourceInfo{Kind: KindMock, Health: HealthOK},
	}
	mode := s.Mode()
	file := cfg.Path
	switch {
	case s.Unread != "":
		// The agent would have read them; fgtop could not, so the mode
		// and every capacity below are a guess it says, and nothing is
		// judged against it (degraded: partition.Inventory).
		a.source.Health = HealthDegraded
		a.issues = append(a.issues, model.Issue{
			Severity: model.SevWarning, Code: model.IssueDeviceSource,
			Message: "the mock plugin's settings could not be read from the agent's etcd (" + s.Unread + "): fgtop assumes none are set (discrete mode, the plugin's default), which may not be what the agent runs; give them with --mock-etcd FILE",
		})
	case !s.AllocationModeSet:
		where := "no --mock-etcd settings given"
		if s.Path != "" {
			where = s.Path + " sets no allocation_mode"
		}
		a.issues = append(a.issues, model.Issue{
			Severity: model.SevInfo, Code: model.IssueDeviceSource, File: s.Path,
			Message: where + ": the mock plugin uses discrete mode (and logs a warning)",
		})
	}
	if mode == "" {
		// The plugin logs "accelerator disabled: invalid allocation mode"
		// and registers nothing; the agent runs without accelerators.
		a.source.Health = HealthUnavailable
		a.source.Detail = fmt.Sprintf("%s: mock plugin disabled (allocation_mode %q)", file, s.AllocationMode)
		a.issues = append(a.issues, model.Issue{
			Severity: model.SevError, Code: model.IssueDeviceSource, File: s.Path,
			Message: fmt.Sprintf("allocation_mode %q is neither \"discrete\" nor \"fractional\": the mock plugin disables itself and the agent has no %s devices", s.AllocationMode, cfg.SlotName),
		})
		return a
	}
	fractional := mode == ModeFractional
	a.fractional = fractional
	if fractional {
		a.quantum = s.QuantumSize
	}
	mainSlot := model.SlotName(cfg.SlotName + ".device")
	if fractional {
		mainSlot = model.SlotName(cfg.SlotName + ".shares")
	}
	a.slotTypes[mainSlot] = model.SlotTypeCount

	// Order: full devices in list order, each followed by the MIG slices
	// carved from it (matched by mother_uuid); a MIG slice whose mother is
	// not listed keeps its own list position.
	type entry struct{ group, mig, pos int }
	order := make([]entry, len(cfg.Devices))
	motherPos := map[string]int{}
	for i, d := range cfg.Devices {
		if !(cfg.IsCUDA() && d.IsMIG) {
			if _, ok := motherPos[d.MotherUUID]; !ok {
				motherPos[d.MotherUUID] = i
			}
		}
	}
	for i, d := range cfg.Devices {
		e := entry{group: i, pos: i}
		if cfg.IsCUDA() && d.IsMIG {
			e.mig = 1
			if p, ok := motherPos[d.MotherUUID]; ok {
				e.group = p
			}
		}
		order[i] = e
	}
	sort.SliceStable(order, func(x, y int) bool {
		a, b := order[x], order[y]
		if a.group != b.group {
			return a.group < b.group
		}
		if a.mig != b.mig {
			return a.mig < b.mig
		}
		return a.pos < b.pos
	})

	var total model.Dec
	hasMIG := false
	for _, e := range order {
		d := cfg.Devices[e.pos]
		dev := model.Device{
			ID:          cfg.DeviceID(e.pos),
			Name:        model.DeviceName(cfg.SlotName),
			Slot:        mainSlot,
			SlotType:    model.SlotTypeCount,
			Capacity:    model.One,
			Index:       e.pos,
			Model:       d.ModelName,
			UUID:        d.MotherUUID,
			NUMANode:    d.NUMANode,
			MemoryBytes: d.MemoryBytes,
			Processors:  d.SubprocCount,
		}
		switch {
		case cfg.IsCUDA() && d.IsMIG:
			hasMIG = true
			dev.Slot = d.MIGSlot()
			dev.SlotType = model.SlotTypeUnique
			// The mother GPU, in the mock's id form; it need not be listed.
			dev.Parent = model.DeviceID(d.MotherUUID)
			a.slotTypes[dev.Slot] = model.SlotTypeUnique
		case s.Unread != "":
			// The mode decides this GPU's slot and capacity, and the mode
			// is a guess: its capacity is unknown, as a CUDA plugin's whose
			// settings were never read, so no surface shows kernels' shares
			// over a guessed 1 as an over-committed GPU.
			dev.Capacity, dev.CapacityUnknown = model.Zero, true
		case fractional:
			dev.Capacity = s.Shares(d.MemoryBytes, d.SubprocCount)
			total = total.Add(dev.Capacity)
		default:
			total = total.Add(model.One)
		}
		a.devices = append(a.devices, dev)
	}

	// get_metadata() looks these format tables up; a missing one fails
	// there, after the agent started.
	need := []string{"device"}
	if fractional {
		need = []string{"shares"}
	}
	if hasMIG {
		need = append(need, "*-mig")
	}
	for _, k := range need {
		if _, ok := cfg.Formats[k]; !ok {
			a.issues = append(a.issues, model.Issue{
				Severity: model.SevWarning, Code: model.IssueDeviceSource, File: file,
				Message: fmt.Sprintf("no [formats.%s] table: the plugin's get_metadata() looks it up in %s mode and fails without it", quoteKey(k), mode),
			})
		}
	}
	totalText := total.String()
	if s.Unread != "" {
		// Not the guessed mode's total: the GPUs' capacities are unknown.
		totalText = "?"
	}
	a.source.Detail = fmt.Sprintf("%s: %d %s device(s), %s mode, %s %s", file, len(cfg.Devices), cfg.SlotName, mode, totalText, mainSlot)
	if s.Unread != "" {
		// First, so that a header cut to its width still says it.
		a.source.Detail = "assumed (the plugin's settings in etcd not read): " + a.source.Detail
	}
	return a
}
