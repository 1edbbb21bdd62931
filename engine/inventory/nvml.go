//go:build cgo && linux

package inventory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/fgtop/fgtop/engine/procmap"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// newSystemLib returns the machine's NVML; tests replace it.
var newSystemLib = func() nvml.Interface { return nvml.New() }

// openSystemNVML opens the machine's NVML (see Open).
func openSystemNVML(opts NVMLOptions, host *Host) (Source, *InitError, error) {
	s := NewNVML(newSystemLib(), opts, host)
	return s, s.InitErr(), nil
}

// NVMLSource reads GPUs through NVML: production passes nvml.New(), tests a
// go-nvml mock (dgxa100, dgxh100).
//
// Per GPU it reads, once: name, UUID, index, total memory, PCI bus id and
// NUMA node (nvmlDeviceGetNumaNodeId where the driver has it, else sysfs,
// else -1); and on every Poll: memory used, utilisation, temperature, power
// and enforced power limit, running compute processes, MIG mode and, with
// MIG on, the MIG devices as child devices.
//
// A call that returns ERROR_NOT_SUPPORTED or ERROR_FUNCTION_NOT_FOUND, or
// panics (an unimplemented go-nvml mock method: the real library returns
// errors), leaves its value N/A; any other error is named in
// Telemetry.Errors. Telemetry.Processes is nil when the process list is
// N/A and empty when no process runs. ERROR_GPU_IS_LOST marks the GPU lost
// for good (it needs a reset): it gets an Issue, the source turns degraded,
// and the GPU is not queried again.
//
// If Init fails, the failure is classified (InitErr) and nothing else in
// NVML is ever called, Shutdown included; Poll then lists the host's
// devices with Health "unavailable" and the classified Issue.
type NVMLSource struct {
	lib     nvml.Interface
	opts    NVMLOptions
	host    *Host
	initErr *InitError

	mu       sync.Mutex
	closed   bool
	gpus     []*nvmlGPU
	static   []model.Issue // enumeration problems found at start
	countErr bool          // no GPU could be counted
	detail   string
	procs    *ProcessReader
	// pollDetail is the source's detail for detailLost lost GPUs; polled
	// is the most devices a poll listed (the next one's capacity).
	pollDetail string
	detailLost int
	polled     int

	// failed-Init readings, cached per HostInfo.
	lastHost *HostInfo
	last     *Inventory

	// prev is the accelerator part of the last reading and prevInv the
	// reading made of it and prevHost: a poll that reads the same returns
	// prevInv itself.
	prev     *accel
	prevHost *HostInfo
	prevInv  *Inventory
	// spare is an accel no reading refers to, for the next poll to fill.
	spare *accel
}

// nvmlGPU is one GPU: its handle, what never changes, and whether it is
// lost.
type nvmlGPU struct {
	h    nvml.Device
	dev  model.Device // static fields; Telemetry set per poll
	uuid string       // NVML's, with "GPU-"
	lost bool
	// noID marks a GPU whose UUID, its id under UUID ids, cannot be read:
	// dev has its index id, and a poll lists it in Unidentified, with
	// notListed, the issue saying it is left out.
	noID      bool
	notListed model.Issue
	// lastSample is the newest per-process utilisation sample seen (the
	// driver's microsecond timestamp): the next poll asks for newer ones.
	lastSample uint64
	// slow holds the values that change only by an operator's action (the
	// enforced power limit, MIG mode), read every SlowEvery.
	slow     slowValues
	slowRead time.Time
	// sampleRet is how the last per-process utilisation call went
	// (ProcUtil for a GPU that runs no process, which is not asked).
	sampleRet model.Opt[bool]
	// lastTel is the telemetry last published for the GPU (immutable).
	lastTel *model.Telemetry
}

// slowValues are a GPU's rarely-changing readings with their return codes.
type slowValues struct {
	capMW  uint32
	capRet nvml.Return
	mig    int
	migRet nvml.Return
}

// NewNVML initialises lib and enumerates its GPUs. It never fails: an Init
// failure is kept in InitErr and reported by Poll.
func NewNVML(lib nvml.Interface, opts NVMLOptions, host *Host) *NVMLSource {
	if opts.IDStyle == "" {
		opts.IDStyle = IDStyleUUID
	}
	if opts.Quantum.IsZero() {
		opts.Quantum = model.NewDec(1, -2)
	}
	if opts.SysRoot == "" {
		opts.SysRoot = "/sys"
	}
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	if opts.SlowEvery == 0 {
		opts.SlowEvery = DefaultSlowEvery
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &NVMLSource{lib: lib, opts: opts, host: host, procs: NewProcessReader(opts.ProcRoot)}
	ret := callRet(lib.Init)
	if ret != nvml.SUCCESS {
		s.initErr = classifyInit(ret)
		// Stop here: every other NVML entry point, Shutdown included,
		// aborts the process once Init has failed.
		return s
	}
	s.enumerate()
	return s
}

// InitErr returns the classified Init failure, or nil when NVML started.
func (s *NVMLSource) InitErr() *InitError { return s.initErr }

// classifyInit maps Init's return code to an InitError.
func classifyInit(ret nvml.Return) *InitError {
	e := &InitError{Code: int(ret), NVML: retText(ret)}
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		e.Reason = InitLibraryNotFound
	case nvml.ERROR_DRIVER_NOT_LOADED:
		e.Reason = InitDriverNotLoaded
	case nvml.ERROR_NO_PERMISSION:
		e.Reason = InitNoPermission
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		e.Reason = InitVersionMismatch
	default:
		e.Reason = InitOther
	}
	return e
}

// retText is NVML's name for a return code. It uses go-nvml's built-in
// table, never nvmlErrorString: that is a library call, and after a failed
// Init a library call kills the process.
func retText(ret nvml.Return) string {
	switch ret {
	case retNotImplemented:
		return "not implemented"
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "ERROR_LIBRARY_NOT_FOUND"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "ERROR_DRIVER_NOT_LOADED"
	case nvml.ERROR_NO_PERMISSION:
		return "ERROR_NO_PERMISSION"
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return "ERROR_LIB_RM_VERSION_MISMATCH"
	}
	return fmt.Sprintf("NVML error %d", int(ret))
}

// retNotImplemented stands for a call that panicked. ERROR_FUNCTION_NOT_FOUND
// is what the real library answers for an entry point the driver lacks, so
// both read as "not available here".
const retNotImplemented = nvml.ERROR_FUNCTION_NOT_FOUND

// call runs one NVML call, turning a panic into retNotImplemented: go-nvml's
// mocks panic for methods a test did not set, and an operator's console must
// not die of a telemetry read. Real NVML failures are return codes.
func call[T any](f func() (T, nvml.Return)) (v T, ret nvml.Return) {
	defer func() {
		if recover() != nil {
			var zero T
			v, ret = zero, retNotImplemented
		}
	}()
	return f()
}

func callRet(f func() nvml.Return) (ret nvml.Return) {
	defer func() {
		if recover() != nil {
			ret = retNotImplemented
		}
	}()
	return f()
}

// errText describes a failed call after a successful Init, when the
// library's own strings are safe to use.
func errText(ret nvml.Return) string {
	if ret == retNotImplemented {
		return "not implemented"
	}
	return ret.Error()
}

// enumerate reads the static part of every GPU, once, after Init.
func (s *NVMLSource) enumerate() {
	driver, _ := call(s.lib.SystemGetDriverVersion)
	version, _ := call(s.lib.SystemGetNVMLVersion)
	// nvmlDeviceGetNumaNodeId is recent; go-nvml binds symbols lazily, so
	// calling one an older driver lacks would abort the process. Ask first.
	hasNUMA := func() (ok bool) {
		defer func() {
			if recover() != nil {
				ok = false
			}
		}()
		ext := s.lib.Extensions()
		return ext != nil && ext.LookupSymbol("nvmlDeviceGetNumaNodeId") == nil
	}()
	smc := newSMCounter(s.lib)

	n, ret := call(s.lib.DeviceGetCount)
	if ret != nvml.SUCCESS {
		s.countErr = true
		s.static = append(s.static, model.Issue{
			Severity: model.SevError, Code: model.IssueDeviceSource,
			Message: fmt.Sprintf("NVML started but cannot count the GPUs (%s)", errText(ret)),
		})
	}
	for i := 0; i < n; i++ {
		h, ret := call(func() (nvml.Device, nvml.Return) { return s.lib.DeviceGetHandleByIndex(i) })
		if ret != nvml.SUCCESS {
			s.static = append(s.static, model.Issue{
				Severity: model.SevError, Code: model.IssueDeviceSource,
				Message: fmt.Sprintf("GPU at NVML index %d: cannot get a handle (%s); it is not listed", i, errText(ret)),
			})
			continue
		}
		g := &nvmlGPU{h: h}
		lost := false
		uuid, ret := call(h.GetUUID)
		uuid = untrusted.Text(uuid)
		if ret == nvml.ERROR_GPU_IS_LOST {
			lost = true
		}
		if ret != nvml.SUCCESS && s.opts.IDStyle == IDStyleUUID {
			// Not listed under UUID ids, but read as under index ids: a
			// plugin that registers GPUs by index (cuda_open) lists it.
			g.noID = true
			g.notListed = model.Issue{
				Severity: model.SevError, Code: model.IssueDeviceSource,
				Message: fmt.Sprintf("GPU at NVML index %d: cannot read its UUID (%s), which is its device id; it is not listed", i, errText(ret)),
			}
			s.static = append(s.static, g.notListed)
		}
		g.uuid = uuid
		idx := i
		if !lost {
			if v, ret := call(h.GetIndex); ret == nvml.SUCCESS {
				idx = v
			}
		}
		var (
			name     string
			memTotal uint64
			numa     = -1
			sms      int
		)
		// A GPU lost already is listed (by index) but not asked more: each
		// call to it can block for seconds.
		if !lost {
			name, _ = call(h.GetName)
			name = untrusted.Text(name)
			if mem, ret := call(h.GetMemoryInfo); ret == nvml.SUCCESS {
				memTotal = mem.Total
			}
			busID := ""
			if pci, ret := call(h.GetPciInfo); ret == nvml.SUCCESS {
				busID = cString(pci.BusId[:])
			}
			if hasNUMA {
				if v, ret := call(h.GetNumaNodeId); ret == nvml.SUCCESS && v >= 0 {
					numa = v
				}
			}
			if numa < 0 && busID != "" {
				numa = sysfsNUMANode(s.opts.SysRoot, busID)
			}
			sms = smc.count(h)
		}
		id := model.DeviceID(uuid)
		if s.opts.IDStyle == IDStyleIndex || g.noID {
			id = model.DeviceID(strconv.Itoa(idx))
		}
		g.dev = model.Device{
			ID:          id,
			Name:        "cuda",
			Slot:        model.SlotCUDADevice,
			SlotType:    model.SlotTypeCount,
			Capacity:    model.One,
			Index:       idx,
			Model:       name,
			UUID:        strings.TrimPrefix(uuid, "GPU-"),
			NUMANode:    numa,
			MemoryBytes: clampInt64(memTotal),
			Processors:  sms,
		}
		if s.opts.Fractional {
			g.dev.Slot = model.SlotCUDAShares
			g.dev.Capacity = s.sharesOf(id)
		}
		g.lost = lost
		s.gpus = append(s.gpus, g)
	}
	slices.SortStableFunc(s.gpus, func(a, b *nvmlGPU) int { return a.dev.Index - b.dev.Index })
	s.detail = fmt.Sprintf("NVML %s, driver %s", orNA(version), orNA(driver))
}

func (s *NVMLSource) sharesOf(id model.DeviceID) model.Dec {
	if v, ok := s.opts.Shares[id]; ok {
		return v
	}
	if !s.opts.DefaultShares.IsZero() {
		return s.opts.DefaultShares
	}
	return model.One
}

// Poll reads every GPU's telemetry and MIG devices, and the host's devices.
func (s *NVMLSource) Poll(ctx context.Context) (*Inventory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("nvml source: poll after Close")
	}
	var hi *HostInfo
	if s.host != nil {
		hi = s.host.Read()
	}
	if s.initErr != nil {
		if s.last == nil || hi != s.lastHost {
			s.last = assemble(&accel{
				source: model.SourceInfo{Kind: KindNVML, Health: HealthUnavailable, Detail: s.initErr.short() + "; host CPU and memory only"},
				issues: []model.Issue{s.initErr.Issue(model.SevError)},
			}, hi)
			s.lastHost = hi
		}
		inv := *s.last
		return &inv, nil
	}

	// The accel of the poll before the last, or of a poll that read the
	// same as the last, is free: assemble copies what an accel holds.
	a := s.spare
	s.spare = nil
	if a == nil {
		a = &accel{slotTypes: model.SlotTypes{}}
	}
	clear(a.slotTypes)
	devices := a.devices[:0]
	if cap(devices) < s.polled {
		devices = make([]model.Device, 0, s.polled)
	}
	*a = accel{
		slotTypes: a.slotTypes,
		source:    model.SourceInfo{Kind: KindNVML, Health: HealthOK},
		issues:    slices.Clone(s.static),
		devices:   devices,
	}
	defer func() { s.polled = max(s.polled, len(a.devices)) }()
	if s.opts.Fractional {
		a.slotTypes[model.SlotCUDAShares] = model.SlotTypeCount
		a.fractional, a.quantum = true, s.opts.Quantum
	} else {
		a.slotTypes[model.SlotCUDADevice] = model.SlotTypeCount
	}
	defer s.procs.EndPoll()
	nLost := 0
	for _, g := range s.gpus {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if g.noID {
			u := UnidentifiedGPU{Devices: s.readGPU(g, nil), NotListed: g.notListed}
			if g.lost {
				nLost++
				u.Issues = append(u.Issues, lostIssue(g))
			}
			a.unidentified = append(a.unidentified, u)
			continue
		}
		from := len(a.devices)
		a.devices = s.readGPU(g, a.devices)
		devs := a.devices[from:]
		if g.lost {
			nLost++
			a.issues = append(a.issues, lostIssue(g))
		}
		for i := range devs {
			if devs[i].IsMIG() {
				a.slotTypes[devs[i].Slot] = model.SlotTypeUnique
			}
		}
	}
	switch {
	case s.countErr:
		a.source.Health = HealthUnavailable
	case nLost > 0 || len(s.static) > 0:
		a.source.Health = HealthDegraded
	}
	if s.detailLost != nLost || s.pollDetail == "" {
		s.pollDetail, s.detailLost = fmt.Sprintf("%s: %d GPU(s)", s.detail, len(s.gpus)), nLost
		if nLost > 0 {
			s.pollDetail += fmt.Sprintf(", %d lost", nLost)
		}
	}
	a.source.Detail = s.pollDetail
	if s.prevInv != nil && hi == s.prevHost && sameAccel(s.prev, a) {
		// At rest nothing moved: no new reading to build, and the
		// consumer's comparison with the last one is a pointer compare.
		s.spare = a
		return s.prevInv, nil
	}
	inv := assemble(a, hi)
	s.spare, s.prev, s.prevHost, s.prevInv = s.prev, a, hi, inv
	return inv, nil
}

// lostIssue is the issue of a lost GPU.
func lostIssue(g *nvmlGPU) model.Issue {
	return model.Issue{
		Severity: model.SevError, Code: model.IssueDeviceSource, Device: g.dev.Key(),
		Message: fmt.Sprintf("GPU %s (index %d) is lost (ERROR_GPU_IS_LOST): it fell off the bus or stopped responding; its kernels cannot use it and it needs a GPU reset or a reboot", g.dev.ID, g.dev.Index),
	}
}

// probe collects the outcome of a GPU's calls into its Telemetry.
type probe struct {
	t *model.Telemetry
}

// ok records one call's return code and reports whether its value is
// valid. Not supported / not implemented leaves the value N/A silently;
// GPU_IS_LOST marks the GPU lost; anything else is an error by name.
func (p probe) ok(what string, ret nvml.Return) bool {
	switch ret {
	case nvml.SUCCESS:
		return true
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		return false
	case nvml.ERROR_GPU_IS_LOST:
		p.t.Lost = true
		return false
	}
	p.t.Errors = append(p.t.Errors, what+": "+errText(ret))
	return false
}

// readGPU reads one GPU's telemetry and, with MIG on, its MIG devices. It
// appends the GPU followed by its MIG devices to dst.
func (s *NVMLSource) readGPU(g *nvmlGPU, dst []model.Device) []model.Device {
	// Read into a value of the poll's own; a reading equal to the last
	// publishes the last one again (no allocation at rest, and the
	// engine's comparison of the two is one pointer compare).
	var tv model.Telemetry
	t := &tv
	dev := g.dev
	if g.lost {
		dev.Telemetry = &model.Telemetry{Lost: true}
		return append(dst, dev)
	}
	p := probe{t}
	h := g.h
	if mem, ret := call(h.GetMemoryInfo); p.ok("memory", ret) {
		t.MemTotal, t.MemUsed = model.Some(mem.Total), model.Some(mem.Used)
	}
	if !t.Lost {
		if u, ret := call(h.GetUtilizationRates); p.ok("utilisation", ret) {
			t.UtilGPU, t.UtilMem = model.Some(u.Gpu), model.Some(u.Memory)
		}
	}
	if !t.Lost {
		if v, ret := call(func() (uint32, nvml.Return) { return h.GetTemperature(nvml.TEMPERATURE_GPU) }); p.ok("temperature", ret) {
			t.TempC = model.Some(v)
		}
	}
	if !t.Lost {
		if v, ret := call(h.GetPowerUsage); p.ok("power", ret) {
			t.PowerMW = model.Some(v)
		}
	}
	if !t.Lost {
		s.readSlow(g)
		if p.ok("power limit", g.slow.capRet) {
			t.PowerCapMW = model.Some(g.slow.capMW)
		}
	}
	var procs []nvml.ProcessInfo
	if !t.Lost {
		var ret nvml.Return
		mark := s.procs.Mark()
		if procs, ret = call(h.GetComputeRunningProcesses); p.ok("processes", ret) {
			t.Processes = s.processes(procs, mark)
		}
	}
	migOn := false
	if !t.Lost {
		if p.ok("MIG mode", g.slow.migRet) {
			migOn = g.slow.mig == nvml.DEVICE_MIG_ENABLE
			t.MIGMode = model.Some(migOn)
		}
	}
	switch {
	case t.Processes == nil || t.Lost:
	case migOn:
		// The driver samples no per-process utilisation under MIG.
		t.ProcUtil = model.Some(false)
	case len(t.Processes) == 0:
		// No process to credit a sample to: not asked, said as last time.
		if g.sampleRet.Valid {
			t.ProcUtil = g.sampleRet
		} else {
			t.ProcUtil = model.Some(true)
		}
	default:
		s.sampleProcesses(g, p, t)
		g.sampleRet = t.ProcUtil
	}
	var mig []model.Device
	if migOn && !t.Lost {
		mig = s.readMIG(g, p, procs)
	}
	if t.Lost {
		// Sticky: a lost GPU does not come back without a reset, and each
		// call to it can block for seconds.
		g.lost = true
		dev.Telemetry = &model.Telemetry{Lost: true, Errors: t.Errors}
		return append(dst, dev)
	}
	if g.lastTel == nil || !SameTelemetry(g.lastTel, t) {
		g.lastTel = new(model.Telemetry)
		*g.lastTel = tv
	}
	dev.Telemetry = g.lastTel
	dst = append(dst, dev)
	return append(dst, mig...)
}

// readSlow re-reads a GPU's slow values when SlowEvery has passed since
// the last read (every poll when SlowEvery is negative). An operator's
// change of the power limit or the MIG mode then shows within SlowEvery;
// every other poll saves two driver calls per GPU.
func (s *NVMLSource) readSlow(g *nvmlGPU) {
	now := s.opts.Now()
	if !g.slowRead.IsZero() && s.opts.SlowEvery > 0 && now.Sub(g.slowRead) < s.opts.SlowEvery {
		return
	}
	h := g.h
	g.slow.capMW, g.slow.capRet = call(h.GetEnforcedPowerLimit)
	g.slow.mig, g.slow.migRet = call(func() (int, nvml.Return) { c, _, r := h.GetMigMode(); return c, r })
	g.slowRead = now
}

// readMIG lists the MIG devices of a GPU with MIG on. It uses the MIG
// device handles where the driver has them (R470+: "MIG-<uuid>" ids) and
// otherwise the GPU/compute instance tables, naming a slice by the legacy
// "MIG-GPU-<uuid>/<gi>/<ci>" form.
func (s *NVMLSource) readMIG(g *nvmlGPU, p probe, parentProcs []nvml.ProcessInfo) []model.Device {
	h := g.h
	count, ret := call(h.GetMaxMigDeviceCount)
	switch ret {
	case nvml.SUCCESS:
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		return s.readMIGInstances(g, p, parentProcs)
	default:
		p.ok("MIG device count", ret)
		return nil
	}
	var out []model.Device
	for i := 0; i < count && !p.t.Lost; i++ {
		mh, ret := call(func() (nvml.Device, nvml.Return) { return h.GetMigDeviceHandleByIndex(i) })
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_NOT_FOUND, nvml.ERROR_INVALID_ARGUMENT:
			continue // an empty MIG slot
		default:
			p.ok(fmt.Sprintf("MIG device %d", i), ret)
			continue
		}
		ct := &model.Telemetry{}
		cp := probe{ct}
		uuid, ret := call(mh.GetUUID)
		uuid = untrusted.Text(uuid)
		if !cp.ok("uuid", ret) {
			p.t.Lost = p.t.Lost || ct.Lost
			p.t.Errors = append(p.t.Errors, prefixAll(fmt.Sprintf("MIG device %d ", i), ct.Errors)...)
			continue
		}
		name, _ := call(mh.GetName)
		name = untrusted.Text(name)
		child := s.migDevice(g, model.DeviceID(uuid), strings.TrimPrefix(uuid, "MIG-"), i, name, migProfileFromName(name))
		child.Telemetry = ct
		if mem, ret := call(mh.GetMemoryInfo); cp.ok("memory", ret) {
			ct.MemTotal, ct.MemUsed = model.Some(mem.Total), model.Some(mem.Used)
			child.MemoryBytes = clampInt64(mem.Total)
		}
		mark := s.procs.Mark()
		if procs, ret := call(mh.GetComputeRunningProcesses); cp.ok("processes", ret) {
			ct.Processes = s.processes(procs, mark)
			ct.ProcUtil = model.Some(false)
		}
		if ct.Lost {
			// A MIG slice is lost only with its GPU.
			p.t.Lost = true
			break
		}
		out = append(out, child)
	}
	return out
}

// migInstance is one compute instance found through the instance tables.
type migInstance struct {
	gi, ci   uint32
	profile  string
	memBytes int64
	sms      int
}

// readMIGInstances is readMIG without MIG device handles: it walks the GPU
// instance profiles, their instances and their compute instances.
func (s *NVMLSource) readMIGInstances(g *nvmlGPU, p probe, parentProcs []nvml.ProcessInfo) []model.Device {
	h := g.h
	var found []migInstance
	for prof := 0; prof < nvml.GPU_INSTANCE_PROFILE_COUNT; prof++ {
		info, ret := call(func() (nvml.GpuInstanceProfileInfo, nvml.Return) { return h.GetGpuInstanceProfileInfo(prof) })
		if ret == nvml.ERROR_GPU_IS_LOST {
			p.t.Lost = true
			return nil
		}
		if ret != nvml.SUCCESS {
			continue // a profile this GPU does not offer
		}
		gis, ret := call(func() ([]nvml.GpuInstance, nvml.Return) { return h.GetGpuInstances(&info) })
		if ret != nvml.SUCCESS {
			continue
		}
		for _, gi := range gis {
			giInfo, ret := call(gi.GetInfo)
			if ret != nvml.SUCCESS {
				continue
			}
			for cprof := 0; cprof < nvml.COMPUTE_INSTANCE_PROFILE_COUNT; cprof++ {
				ciProf, ret := call(func() (nvml.ComputeInstanceProfileInfo, nvml.Return) {
					return gi.GetComputeInstanceProfileInfo(cprof, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
				})
				if ret != nvml.SUCCESS {
					continue
				}
				cis, ret := call(func() ([]nvml.ComputeInstance, nvml.Return) { return gi.GetComputeInstances(&ciProf) })
				if ret != nvml.SUCCESS {
					continue
				}
				for _, ci := range cis {
					ciInfo, ret := call(ci.GetInfo)
					if ret != nvml.SUCCESS {
						continue
					}
					found = append(found, migInstance{
						gi: giInfo.Id, ci: ciInfo.Id,
						profile:  gpuInstanceProfileName(info),
						memBytes: clampInt64(info.MemorySizeMB << 20),
						sms:      int(ciProf.MultiprocessorCount),
					})
				}
			}
		}
	}
	slices.SortFunc(found, func(a, b migInstance) int {
		if a.gi != b.gi {
			return int(a.gi) - int(b.gi)
		}
		return int(a.ci) - int(b.ci)
	})
	out := make([]model.Device, 0, len(found))
	for i, m := range found {
		id := fmt.Sprintf("MIG-%s/%d/%d", g.uuid, m.gi, m.ci)
		child := s.migDevice(g, model.DeviceID(id), strings.TrimPrefix(id, "MIG-"), i, strings.TrimSpace(g.dev.Model+" MIG "+m.profile), m.profile)
		child.MemoryBytes = m.memBytes
		child.Processors = m.sms
		ct := &model.Telemetry{MemTotal: model.Some(uint64(m.memBytes))}
		if parentProcs != nil {
			var mine []nvml.ProcessInfo
			for _, pr := range parentProcs {
				if pr.GpuInstanceId == m.gi && pr.ComputeInstanceId == m.ci {
					mine = append(mine, pr)
				}
			}
			// The parent's listing, already read under its own mark.
			ct.Processes = s.processes(mine, procmap.Mark{})
			ct.ProcUtil = model.Some(false)
		}
		child.Telemetry = ct
		out = append(out, child)
	}
	return out
}

// migDevice builds a MIG child device of g.
func (s *NVMLSource) migDevice(g *nvmlGPU, id model.DeviceID, uuid string, index int, name, profile string) model.Device {
	if profile == "" {
		profile = "unknown"
	}
	return model.Device{
		ID:       id,
		Name:     "cuda",
		Slot:     model.SlotName("cuda.device:" + profile + "-mig"),
		SlotType: model.SlotTypeUnique,
		Capacity: model.One,
		Index:    index,
		Model:    name,
		UUID:     uuid,
		NUMANode: g.dev.NUMANode,
		Parent:   g.dev.ID,
	}
}

// migProfileFromName takes the profile from a MIG device's name,
// "NVIDIA A100-SXM4-40GB MIG 1g.5gb" giving "1g.5gb". Backend.AI's mock
// names MIG slots "cuda.device:<profile>-mig"; fgtop uses NVML's profile
// name in that place.
func migProfileFromName(name string) string {
	i := strings.LastIndex(name, "MIG ")
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(name[i+len("MIG "):])
}

// gpuInstanceProfileName derives nvidia-smi's profile name ("1g.5gb") from
// a GPU instance profile: slices, and memory rounded up to whole GB.
func gpuInstanceProfileName(info nvml.GpuInstanceProfileInfo) string {
	gb := (info.MemorySizeMB + 1023) / 1024
	name := fmt.Sprintf("%dg.%dgb", info.SliceCount, gb)
	switch info.Id {
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1:
		name += "+me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME:
		name += "-me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX:
		name += "+gfx"
	}
	return name
}

// processes converts NVML's process list (taken at mark), naming each
// process from /proc (ProcessReader).
func (s *NVMLSource) processes(procs []nvml.ProcessInfo, mark procmap.Mark) []model.Process {
	raw := make([]RawProcess, len(procs))
	for i, pr := range procs {
		raw[i].PID = pr.Pid
		// NVML_VALUE_NOT_AVAILABLE (all ones) where the driver cannot
		// attribute memory (MIG without privileges, some platforms).
		if pr.UsedGpuMemory != math.MaxUint64 {
			raw[i].UsedMem = model.Some(pr.UsedGpuMemory)
		}
	}
	return s.procs.Read(raw, mark)
}

// sampleProcesses adds the driver's per-process utilisation samples to a
// GPU's processes (nvmlDeviceGetProcessUtilization, Maxwell and newer).
// The driver returns a sample only for processes that used the GPU in the
// sample period, and ERROR_NOT_FOUND when none did: a listed process
// without a sample is at 0 %. A driver without the call leaves the
// processes with their memory only (ProcUtil false).
func (s *NVMLSource) sampleProcesses(g *nvmlGPU, p probe, t *model.Telemetry) {
	samples, ret := call(func() ([]nvml.ProcessUtilizationSample, nvml.Return) {
		return g.h.GetProcessUtilization(g.lastSample)
	})
	switch {
	case ret == nvml.SUCCESS, ret == nvml.ERROR_NOT_FOUND:
	case ret == nvml.ERROR_INSUFFICIENT_SIZE && len(samples) == 0:
		// go-nvml's answer when the size query found no samples.
	default:
		p.ok("process utilisation", ret)
		t.ProcUtil = model.Some(false)
		return
	}
	type acc struct{ sm, mem, n uint64 }
	per := make(map[uint32]*acc, len(samples))
	for _, sm := range samples {
		if sm.TimeStamp <= g.lastSample {
			continue
		}
		a := per[sm.Pid]
		if a == nil {
			a = &acc{}
			per[sm.Pid] = a
		}
		a.sm += uint64(min(sm.SmUtil, 100))
		a.mem += uint64(min(sm.MemUtil, 100))
		a.n++
	}
	for _, sm := range samples {
		g.lastSample = max(g.lastSample, sm.TimeStamp)
	}
	for i := range t.Processes {
		pr := &t.Processes[i]
		var smv, memv uint32
		if a := per[pr.PID]; a != nil {
			smv, memv = uint32((a.sm+a.n/2)/a.n), uint32((a.mem+a.n/2)/a.n)
		}
		pr.SMUtil, pr.MemUtil = model.Some(smv), model.Some(memv)
	}
	t.ProcUtil = model.Some(true)
}

// Close shuts NVML down if, and only if, Init succeeded.
func (s *NVMLSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.initErr != nil {
		return nil
	}
	if ret := callRet(s.lib.Shutdown); ret != nvml.SUCCESS && ret != retNotImplemented {
		return fmt.Errorf("nvml shutdown: %s", errText(ret))
	}
	return nil
}

// sysfsNUMANode reads a PCI device's NUMA node from sysfs; -1 when unknown.
// NVML writes bus ids as "00000000:3B:00.0", sysfs as "0000:3b:00.0".
func sysfsNUMANode(sysRoot, busID string) int {
	id := strings.ToLower(busID)
	if dom, rest, ok := strings.Cut(id, ":"); ok && len(dom) == 8 {
		id = dom[4:] + ":" + rest
	}
	b, err := os.ReadFile(filepath.Join(sysRoot, "bus/pci/devices", id, "numa_node"))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// cString converts a NUL-terminated C char array.
func cString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

func clampInt64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

func orNA(s string) string {
	if s == "" {
		return "N/A"
	}
	return s
}

func prefixAll(prefix string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = prefix + x
	}
	return out
}

// IsNVML reports whether s reads NVML (whether or not its Init worked): a
// node's CUDA plugin is mirrored only over such a source.
func IsNVML(s Source) bool {
	_, ok := s.(*NVMLSource)
	return ok
}
