package history

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fgtop/fgtop/model"
)

// Bounds on what a record may claim, so a corrupt or hostile file cannot
// make a reader allocate without limit.
const (
	maxString  = 1 << 20 // one string of a record
	maxEntries = 1 << 16 // entries of one map or list in a record
)

var errShort = errors.New("record cut short")

// enc appends the binary forms of a record's fields.
type enc struct{ b []byte }

func (e *enc) byte(c byte)      { e.b = append(e.b, c) }
func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) str(s string) {
	e.uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *enc) time(t time.Time) {
	if t.IsZero() {
		e.varint(0)
		return
	}
	e.varint(t.UnixNano())
}
func (e *enc) bool(v bool) {
	if v {
		e.byte(1)
	} else {
		e.byte(0)
	}
}
func (e *enc) dec(d model.Dec) { e.str(d.String()) }

// dec reads what enc wrote; the first error sticks and every later read
// returns zero values.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *dec) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail(errShort)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) count() int {
	n := d.uvarint()
	if n > maxEntries {
		d.fail(fmt.Errorf("%d entries, more than %d", n, maxEntries))
		return 0
	}
	return int(n)
}

func (d *dec) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > maxString || n > uint64(len(d.b)) {
		d.fail(errShort)
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *dec) time() time.Time {
	n := d.varint()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func (d *dec) bool() bool { return d.byte() != 0 }

func (d *dec) dec() model.Dec {
	s := d.str()
	if d.err != nil {
		return model.Dec{}
	}
	v, err := model.ParseDec(s)
	if err != nil {
		d.fail(fmt.Errorf("amount %q: %w", s, err))
	}
	return v
}

// Kernel records carry the fields a history query reads first (who, what,
// on which device), so that it can stop decoding there (kernelHead).

func encodeKernel(e *enc, k *model.Kernel) (useAt int) {
	e.str(string(k.ID))
	e.str(string(k.Agent))
	e.str(string(k.AgentBy))
	e.str(string(k.State))
	encodeAlloc(e, k.Alloc)
	if r := k.Record; r != nil {
		e.byte(1)
		for _, s := range []string{r.Path, string(r.KernelID), string(r.AgentID), r.SessionID, r.SessionType,
			r.OwnerUserID, r.OwnerProjectID, r.Image, r.Architecture} {
			e.str(s)
		}
	} else {
		e.byte(0)
	}
	e.str(k.Path)
	e.uvarint(uint64(len(k.Slots)))
	for _, n := range k.Slots.Names() {
		e.str(string(n))
		e.dec(k.Slots[n])
	}
	e.uvarint(uint64(len(k.UnifiedDevices)))
	for _, p := range k.UnifiedDevices {
		e.str(p[0])
		e.str(p[1])
	}
	e.time(k.ModTime)
	e.time(k.Seen)
	if p := k.Problem; p != nil {
		e.byte(1)
		encodeIssue(e, p)
	} else {
		e.byte(0)
	}
	e.bool(k.Legacy)
	e.str(k.Container)
	// Use moves with every reading of the devices; it is kept as it was
	// when the kernel last changed otherwise, and compared by nobody.
	useAt = len(e.b)
	if k.Use != nil {
		b, _ := json.Marshal(k.Use)
		e.str(string(b))
	} else {
		e.str("")
	}
	return useAt
}

func encodeAlloc(e *enc, al model.Allocations) {
	slots := make([]model.SlotName, 0, len(al))
	for s := range al {
		slots = append(slots, s)
	}
	sortStrings(slots)
	e.uvarint(uint64(len(slots)))
	for _, s := range slots {
		devs := al[s]
		ids := make([]model.DeviceID, 0, len(devs))
		for id := range devs {
			ids = append(ids, id)
		}
		sortStrings(ids)
		e.str(string(s))
		e.uvarint(uint64(len(ids)))
		for _, id := range ids {
			e.str(string(id))
			e.dec(devs[id])
		}
	}
}

func decodeAlloc(d *dec) model.Allocations {
	n := d.count()
	if n == 0 {
		return nil
	}
	al := make(model.Allocations, n)
	for i := 0; i < n && d.err == nil; i++ {
		slot := model.SlotName(d.str())
		m := d.count()
		devs := make(map[model.DeviceID]model.Dec, m)
		for j := 0; j < m && d.err == nil; j++ {
			id := model.DeviceID(d.str())
			devs[id] = d.dec()
		}
		al[slot] = devs
	}
	return al
}

func encodeIssue(e *enc, i *model.Issue) {
	e.uvarint(uint64(i.Severity))
	e.str(i.Code)
	e.str(i.Message)
	e.str(i.File)
	e.uvarint(uint64(max(i.Line, 0)))
	e.str(string(i.Device.Name))
	e.str(string(i.Device.ID))
	e.str(string(i.Kernel))
	e.str(string(i.Agent))
}

func decodeIssue(d *dec) model.Issue {
	var i model.Issue
	sev := d.uvarint()
	if sev > uint64(model.SevError) {
		d.fail(fmt.Errorf("severity %d", sev))
	}
	i.Severity = model.Severity(sev)
	i.Code = d.str()
	i.Message = d.str()
	i.File = d.str()
	i.Line = int(min(d.uvarint(), 1<<31))
	i.Device = model.DeviceKey{Name: model.DeviceName(d.str()), ID: model.DeviceID(d.str())}
	i.Kernel = model.KernelID(d.str())
	i.Agent = model.AgentID(d.str())
	return i
}

// kernelHead is what a history query needs of a kernel record.
type kernelHead struct {
	ID      model.KernelID
	Agent   model.AgentID
	State   model.KernelState
	Alloc   model.Allocations
	Session string
	User    string
	Project string
}

func decodeKernelHead(d *dec) kernelHead {
	var h kernelHead
	h.ID = model.KernelID(d.str())
	h.Agent = model.AgentID(d.str())
	d.str() // agent basis
	h.State = model.KernelState(d.str())
	h.Alloc = decodeAlloc(d)
	if d.byte() == 1 {
		var f [9]string
		for i := range f {
			f[i] = d.str()
		}
		h.Session, h.User, h.Project = f[3], f[5], f[6]
	}
	return h
}

func decodeKernel(d *dec) *model.Kernel {
	k := &model.Kernel{}
	k.ID = model.KernelID(d.str())
	k.Agent = model.AgentID(d.str())
	k.AgentBy = model.AgentBasis(d.str())
	k.State = model.KernelState(d.str())
	k.Alloc = decodeAlloc(d)
	if d.byte() == 1 {
		r := &model.KernelRecord{}
		r.Path = d.str()
		r.KernelID = model.KernelID(d.str())
		r.AgentID = model.AgentID(d.str())
		r.SessionID, r.SessionType = d.str(), d.str()
		r.OwnerUserID, r.OwnerProjectID = d.str(), d.str()
		r.Image, r.Architecture = d.str(), d.str()
		k.Record = r
	}
	k.Path = d.str()
	if n := d.count(); n > 0 {
		k.Slots = make(model.ResourceSlot, n)
		for i := 0; i < n && d.err == nil; i++ {
			s := model.SlotName(d.str())
			k.Slots[s] = d.dec()
		}
	}
	if n := d.count(); n > 0 {
		k.UnifiedDevices = make([][2]string, n)
		for i := 0; i < n && d.err == nil; i++ {
			k.UnifiedDevices[i] = [2]string{d.str(), d.str()}
		}
	}
	k.ModTime = d.time()
	k.Seen = d.time()
	if d.byte() == 1 {
		p := decodeIssue(d)
		k.Problem = &p
	}
	k.Legacy = d.bool()
	k.Container = d.str()
	if u := d.str(); u != "" && d.err == nil {
		var use model.KernelUse
		if err := json.Unmarshal([]byte(u), &use); err != nil {
			d.fail(fmt.Errorf("kernel use: %w", err))
		} else {
			k.Use = &use
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail(fmt.Errorf("%d bytes after the kernel record", len(d.b)))
	}
	return k
}

func sortStrings[S ~string](xs []S) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}
