package history

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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
func (e *enc) dec(d model.Dec) {
	var buf [32]byte
	b := d.AppendString(buf[:0])
	e.uvarint(uint64(len(b)))
	e.b = append(e.b, b...)
}

// Identifiers are random hex (kernel, session and user UUIDs, container
// ids): stored as bytes they take half the room, and the compressor,
// which sees one change at a time on a quiet node, gets nothing to
// entropy-code. Tags: 0 as is, 1 a lowercase canonical UUID in 16 bytes,
// 2 lowercase hex of even length in half as many bytes.
const (
	idRaw  = 0
	idUUID = 1
	idHex  = 2
)

func (e *enc) id(s string) {
	switch {
	case isUUID(s):
		e.byte(idUUID)
		// Piece by piece: joining them first made a string per id.
		e.b = appendHex(appendHex(appendHex(appendHex(appendHex(e.b, s[0:8]), s[9:13]), s[14:18]), s[19:23]), s[24:])
	case len(s) >= 2 && len(s)%2 == 0 && len(s) <= maxString && isLowerHex(s):
		e.byte(idHex)
		e.uvarint(uint64(len(s) / 2))
		e.b = appendHex(e.b, s)
	default:
		e.byte(idRaw)
		e.str(s)
	}
}

// rel stores s with every occurrence of the kernel's id replaced (paths
// under the scratch root, the record's kernel id).
func (e *enc) rel(s, id string) {
	if id != "" && strings.Contains(s, id) && !strings.Contains(s, "\x00") {
		e.byte(1)
		e.str(strings.ReplaceAll(s, id, "\x00"))
		return
	}
	e.byte(0)
	e.str(s)
}

func isUUID(s string) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	return isLowerHex(s[0:8]) && isLowerHex(s[9:13]) && isLowerHex(s[14:18]) && isLowerHex(s[19:23]) && isLowerHex(s[24:])
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func appendHex(dst []byte, s string) []byte {
	for i := 0; i+1 < len(s); i += 2 {
		dst = append(dst, unhex(s[i])<<4|unhex(s[i+1]))
	}
	return dst
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

const hexDigits = "0123456789abcdef"

// dec reads what enc wrote; the first error sticks and every later read
// returns zero values.
type dec struct {
	b   []byte
	err error
	// in, when set, shares the strings and amounts kernels repeat (slot
	// and device names, agents, states, images, amounts) between the
	// kernels it decodes: a snapshot of 10,000 kernels allocates and
	// parses each once.
	in *interner
}

// interner is the strings and amounts a run of kernel decodes has seen.
// Not safe for concurrent use: one per goroutine.
type interner struct {
	strs map[string]string
	decs map[string]model.Dec
	// uuids: the text of UUIDs by their 16 bytes (owners, projects).
	uuids map[[16]byte]string
	// slots: kernels' requests (SLOTS) by their encoding (islots): a
	// week's 200,000 kernels ask a few hundred, and a map each was as
	// many allocations as the rest of their heads.
	slots map[string]model.ResourceSlot
}

// Bounds: only short strings are kept, and only so many, whatever the
// record holds.
const (
	internLen = 64
	internMax = 1 << 14
)

func newInterner() *interner {
	return &interner{strs: map[string]string{}, decs: map[string]model.Dec{}, uuids: map[[16]byte]string{},
		slots: map[string]model.ResourceSlot{}}
}

// istr is str, interned when the decoder has an interner.
func (d *dec) istr() string {
	if d.in == nil {
		return d.str()
	}
	b := d.strBytes()
	if d.err != nil {
		return ""
	}
	return d.intern(b)
}

// intern makes a string of b, shared when the decoder has an interner.
func (d *dec) intern(b []byte) string {
	if d.in == nil {
		return string(b)
	}
	if s, ok := d.in.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(s) <= internLen && len(d.in.strs) < internMax {
		d.in.strs[s] = s
	}
	return s
}

// iid is id, a UUID's text shared when the decoder has an interner: for
// the ids kernels repeat (owners, projects), not their own.
func (d *dec) iid() string {
	if d.in == nil || len(d.b) < 17 || d.b[0] != idUUID || d.err != nil {
		return d.id()
	}
	var key [16]byte
	copy(key[:], d.b[1:17])
	if s, ok := d.in.uuids[key]; ok {
		d.b = d.b[17:]
		return s
	}
	s := d.id()
	if d.err == nil && len(d.in.uuids) < internMax {
		d.in.uuids[key] = s
	}
	return s
}

// strBytes reads a string's bytes without copying them.
func (d *dec) strBytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > maxString || n > uint64(len(d.b)) {
		d.fail(errShort)
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
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

func (d *dec) raw(n int) []byte {
	if d.err != nil || n > len(d.b) {
		d.fail(errShort)
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

func (d *dec) id() string {
	switch d.byte() {
	case idRaw:
		return d.str()
	case idUUID:
		b := d.raw(16)
		if b == nil {
			return ""
		}
		var out [36]byte
		j := 0
		for i, c := range b {
			if i == 4 || i == 6 || i == 8 || i == 10 {
				out[j] = '-'
				j++
			}
			out[j], out[j+1] = hexDigits[c>>4], hexDigits[c&15]
			j += 2
		}
		return string(out[:])
	case idHex:
		n := d.uvarint()
		if n > maxString/2 {
			d.fail(errShort)
			return ""
		}
		return toHex(d.raw(int(n)))
	default:
		d.fail(errors.New("unknown id form"))
		return ""
	}
}

func (d *dec) rel(id string) string {
	tag := d.byte()
	s := d.str()
	if tag == 1 {
		if s == "\x00" {
			// The record's kernel id: the kernel's own string.
			return id
		}
		return strings.ReplaceAll(s, "\x00", id)
	}
	return s
}

// appendID appends the text of an id (what id returns) to dst, for a
// lookup that need not make a string of it.
func (d *dec) appendID(dst []byte) []byte {
	switch d.byte() {
	case idRaw:
		return append(dst, d.strBytes()...)
	case idUUID:
		b := d.raw(16)
		for i, c := range b {
			if i == 4 || i == 6 || i == 8 || i == 10 {
				dst = append(dst, '-')
			}
			dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
		}
		return dst
	case idHex:
		n := d.uvarint()
		if n > maxString/2 {
			d.fail(errShort)
			return dst
		}
		for _, c := range d.raw(int(n)) {
			dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
		}
		return dst
	default:
		d.fail(errors.New("unknown id form"))
		return dst
	}
}

func toHex(b []byte) string {
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = hexDigits[c>>4], hexDigits[c&15]
	}
	return string(out)
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
	if d.in != nil {
		b := d.strBytes()
		if d.err != nil {
			return model.Dec{}
		}
		if v, ok := d.in.decs[string(b)]; ok {
			return v
		}
		s := string(b)
		v, err := model.ParseDec(s)
		if err != nil {
			d.fail(fmt.Errorf("amount %q: %w", s, err))
			return v
		}
		if len(s) <= internLen && len(d.in.decs) < internMax {
			// A Dec is immutable: kernels can share one.
			d.in.decs[s] = v
		}
		return v
	}
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
// on which device), so that it can stop decoding there (kernelHead). A
// full record has every field; a patch record (recKernelPatch) the id, a
// mask and the fields that changed.
const (
	fAgent = iota
	fAgentBy
	fState
	fAlloc
	fRecord
	fPath
	fSlots
	fUnified
	fModTime
	fSeen
	fProblem
	fLegacy
	fContainer
	fUse
	nFields
)

func encodeKernel(e *enc, k *model.Kernel) (useAt int) {
	e.id(string(k.ID))
	for f := 0; f < nFields; f++ {
		if f == fUse {
			// Use moves with every reading of the devices; it is kept as
			// it was when the kernel last changed otherwise, and compared
			// by nobody.
			useAt = len(e.b)
		}
		encodeField(e, k, f)
	}
	return useAt
}

// kernelMask says which fields of k differ from o (Use only when
// something else does).
func kernelMask(o, k *model.Kernel) uint32 {
	var m uint32
	set := func(f int, differ bool) {
		if differ {
			m |= 1 << f
		}
	}
	set(fAgent, o.Agent != k.Agent)
	set(fAgentBy, o.AgentBy != k.AgentBy)
	set(fState, o.State != k.State)
	set(fAlloc, !allocIdentical(o.Alloc, k.Alloc))
	set(fRecord, !(o.Record == k.Record || o.Record != nil && k.Record != nil && *o.Record == *k.Record))
	set(fPath, o.Path != k.Path)
	set(fSlots, !slotsIdentical(o.Slots, k.Slots))
	set(fUnified, !slices.Equal(o.UnifiedDevices, k.UnifiedDevices))
	set(fModTime, !o.ModTime.Equal(k.ModTime))
	set(fSeen, !o.Seen.Equal(k.Seen))
	set(fProblem, !(o.Problem == k.Problem || o.Problem != nil && k.Problem != nil && *o.Problem == *k.Problem))
	set(fLegacy, o.Legacy != k.Legacy)
	set(fContainer, o.Container != k.Container)
	if m != 0 && !o.Use.Equal(k.Use) {
		m |= 1 << fUse
	}
	return m
}

func allocIdentical(a, b model.Allocations) bool {
	if len(a) != len(b) {
		return false
	}
	for s, x := range a {
		y, ok := b[s]
		if !ok || len(x) != len(y) {
			return false
		}
		for id, v := range x {
			if w, ok := y[id]; !ok || !same(v, w) {
				return false
			}
		}
	}
	return true
}

func encodePatch(e *enc, k *model.Kernel, mask uint32) {
	e.id(string(k.ID))
	e.uvarint(uint64(mask))
	for f := 0; f < nFields; f++ {
		if mask&(1<<f) != 0 {
			encodeField(e, k, f)
		}
	}
}

// decodePatch reads a patch record into k (the kernel as last recorded,
// a copy the caller owns).
func decodePatch(d *dec, k *model.Kernel) (mask uint32) { return decodePatchSkip(d, k, 0) }

// skippable are the fields whose decoding builds maps: a kernel's record,
// or a patch, need not build them when a later patch sets them again.
const skippable = 1<<fAlloc | 1<<fSlots

// decodePatchSkip is decodePatch reading the fields in skip (of
// skippable) without building them: it checks them as decodeField does
// (the same errors), and leaves k's as they were.
func decodePatchSkip(d *dec, k *model.Kernel, skip uint32) (mask uint32) {
	mask = uint32(d.uvarint())
	if mask >= 1<<nFields {
		d.fail(fmt.Errorf("field mask %#x", mask))
		return 0
	}
	for f := 0; f < nFields && d.err == nil; f++ {
		switch {
		case mask&(1<<f) == 0:
		case skip&(1<<f) != 0:
			skipField(d, f)
		default:
			decodeField(d, k, f)
		}
	}
	return mask
}

// patchMask is a patch record's field mask (0 when it has none that
// makes sense).
func patchMask(body []byte) uint32 {
	d := dec{b: body}
	d.id()
	mask := uint32(d.uvarint())
	if d.err != nil || mask >= 1<<nFields {
		return 0
	}
	return mask
}

// skipField reads a skippable field as decodeField reads it (the same
// reads, so the same errors: amounts are parsed too, which an interner
// makes cheap) without building anything.
func skipField(d *dec, f int) {
	switch f {
	case fAlloc:
		n := d.count()
		for i := 0; i < n && d.err == nil; i++ {
			d.strBytes()
			m := d.count()
			for j := 0; j < m && d.err == nil; j++ {
				d.strBytes()
				d.dec()
			}
		}
	case fSlots:
		n := d.count()
		for i := 0; i < n && d.err == nil; i++ {
			d.strBytes()
			d.dec()
		}
	default:
		d.fail(fmt.Errorf("field %d cannot be skipped", f))
	}
}

func encodeField(e *enc, k *model.Kernel, f int) {
	switch f {
	case fAgent:
		e.str(string(k.Agent))
	case fAgentBy:
		e.str(string(k.AgentBy))
	case fState:
		e.str(string(k.State))
	case fAlloc:
		encodeAlloc(e, k.Alloc)
	case fRecord:
		if r := k.Record; r != nil {
			e.byte(1)
			id := string(k.ID)
			e.rel(r.Path, id)
			e.rel(string(r.KernelID), id)
			e.str(string(r.AgentID))
			e.id(r.SessionID)
			e.str(r.SessionType)
			e.id(r.OwnerUserID)
			e.id(r.OwnerProjectID)
			e.str(r.Image)
			e.str(r.Architecture)
		} else {
			e.byte(0)
		}
	case fPath:
		e.rel(k.Path, string(k.ID))
	case fSlots:
		encodeSlots(e, k.Slots)
	case fUnified:
		e.uvarint(uint64(len(k.UnifiedDevices)))
		for _, p := range k.UnifiedDevices {
			e.str(p[0])
			e.str(p[1])
		}
	case fModTime:
		e.time(k.ModTime)
	case fSeen:
		e.time(k.Seen)
	case fProblem:
		if p := k.Problem; p != nil {
			e.byte(1)
			encodeIssue(e, p)
		} else {
			e.byte(0)
		}
	case fLegacy:
		e.bool(k.Legacy)
	case fContainer:
		e.id(k.Container)
	case fUse:
		if k.Use != nil {
			b, _ := json.Marshal(k.Use)
			e.str(string(b))
		} else {
			e.str("")
		}
	}
}

func decodeField(d *dec, k *model.Kernel, f int) {
	switch f {
	case fAgent:
		k.Agent = model.AgentID(d.istr())
	case fAgentBy:
		k.AgentBy = model.AgentBasis(d.istr())
	case fState:
		k.State = model.KernelState(d.istr())
	case fAlloc:
		k.Alloc = decodeAlloc(d)
	case fRecord:
		k.Record = nil
		if d.byte() == 1 {
			id := string(k.ID)
			r := &model.KernelRecord{}
			r.Path = d.rel(id)
			r.KernelID = model.KernelID(d.rel(id))
			r.AgentID = model.AgentID(d.istr())
			r.SessionID = d.id()
			r.SessionType = d.istr()
			r.OwnerUserID = d.iid()
			r.OwnerProjectID = d.iid()
			r.Image, r.Architecture = d.istr(), d.istr()
			k.Record = r
		}
	case fPath:
		k.Path = d.rel(string(k.ID))
	case fSlots:
		k.Slots = nil
		if n := d.count(); n > 0 {
			k.Slots = make(model.ResourceSlot, n)
			for i := 0; i < n && d.err == nil; i++ {
				s := model.SlotName(d.istr())
				k.Slots[s] = d.dec()
			}
		}
	case fUnified:
		k.UnifiedDevices = nil
		if n := d.count(); n > 0 {
			k.UnifiedDevices = make([][2]string, n)
			for i := 0; i < n && d.err == nil; i++ {
				k.UnifiedDevices[i] = [2]string{d.str(), d.str()}
			}
		}
	case fModTime:
		k.ModTime = d.time()
	case fSeen:
		k.Seen = d.time()
	case fProblem:
		k.Problem = nil
		if d.byte() == 1 {
			p := decodeIssue(d)
			k.Problem = &p
		}
	case fLegacy:
		k.Legacy = d.bool()
	case fContainer:
		k.Container = d.id()
	case fUse:
		k.Use = nil
		if u := d.str(); u != "" && d.err == nil {
			var use model.KernelUse
			if err := json.Unmarshal([]byte(u), &use); err != nil {
				d.fail(fmt.Errorf("kernel use: %w", err))
			} else {
				k.Use = &use
			}
		}
	}
}

func encodeAlloc(e *enc, al model.Allocations) {
	// On the stack for the usual kernel (a few slots, a few devices each).
	var sa [8]model.SlotName
	var ia [16]model.DeviceID
	slots := sa[:0]
	for s := range al {
		slots = append(slots, s)
	}
	sortStrings(slots)
	e.uvarint(uint64(len(slots)))
	for _, s := range slots {
		devs := al[s]
		ids := ia[:0]
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
		slot := model.SlotName(d.istr())
		m := d.count()
		devs := make(map[model.DeviceID]model.Dec, m)
		for j := 0; j < m && d.err == nil; j++ {
			id := model.DeviceID(d.istr())
			devs[id] = d.dec()
		}
		al[slot] = devs
	}
	return al
}

// devWant is the devices whose allocations a history query keeps (nil:
// all), checked on a record's bytes before any string is made of them:
// most of what a week's kernel records hold is on other devices.
type devWant struct {
	// name is the device name ("cuda"), unless bare: any accelerator
	// with the id.
	name, id string
	bare     bool
}

// newDevWant parses a Filter's Device ("" : nil, all devices).
func newDevWant(dev string) *devWant {
	if dev == "" {
		return nil
	}
	i := strings.IndexByte(dev, ':')
	if i < 0 {
		return &devWant{id: dev, bare: true}
	}
	return &devWant{name: dev[:i], id: dev[i+1:]}
}

// key reports whether the device k is wanted.
func (w *devWant) key(k model.DeviceKey) bool {
	return w == nil || string(k.ID) == w.id && (w.bare || string(k.Name) == w.name)
}

// wants reports whether the device id of an allocation under slot is
// wanted.
func (w *devWant) wants(slot, id []byte) bool {
	if w == nil {
		return true
	}
	if string(id) != w.id {
		return false
	}
	if w.bare {
		return true
	}
	name, _, _ := bytes.Cut(slot, []byte{'.'})
	return string(name) == w.name
}

// decodeAllocOf reads an allocation keeping the wanted devices only.
func decodeAllocOf(d *dec, want *devWant) model.Allocations {
	n := d.count()
	var al model.Allocations
	for i := 0; i < n && d.err == nil; i++ {
		slotB := d.strBytes()
		var slot model.SlotName
		named := false
		if _, again := al[model.SlotName(slotB)]; again {
			// The writer never repeats a slot; a damaged or hand-made
			// record may, and the second replaces the first, as
			// decodeAlloc and the flat reader read it.
			delete(al, model.SlotName(slotB))
		}
		m := d.count()
		for j := 0; j < m && d.err == nil; j++ {
			idB := d.strBytes()
			if d.err != nil {
				break
			}
			if !want.wants(slotB, idB) {
				d.skipOrStr(false)
				continue
			}
			if !named {
				slot, named = model.SlotName(d.intern(slotB)), true
			}
			id := model.DeviceID(d.intern(idB))
			v := d.dec()
			if al == nil {
				al = model.Allocations{}
			}
			if al[slot] == nil {
				al[slot] = map[model.DeviceID]model.Dec{}
			}
			al[slot][id] = v
		}
	}
	return al
}

// skipOrStr reads a string, or (keep false) only steps over it.
func (d *dec) skipOrStr(keep bool) string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > maxString || n > uint64(len(d.b)) {
		d.fail(errShort)
		return ""
	}
	var s string
	if keep {
		s = string(d.b[:n])
	}
	d.b = d.b[n:]
	return s
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

func decodeKernelHead(d *dec) kernelHead { return decodeKernelHeadOf(d, nil) }

// decodeKernelHeadOf is decodeKernelHead keeping only the allocations on
// devices want accepts (nil: all): a history query over a week reads
// every kernel record, and most of what they hold it does not ask about.
func decodeKernelHeadOf(d *dec, want *devWant) kernelHead {
	return decodeHeadRest(d, model.KernelID(d.id()), want)
}

// decodeHeadRest is decodeKernelHeadOf after the id (id).
func decodeHeadRest(d *dec, id model.KernelID, want *devWant) kernelHead {
	k := &model.Kernel{ID: id}
	for f := 0; f <= fRecord && d.err == nil; f++ {
		switch {
		case f == fAlloc && want != nil:
			k.Alloc = decodeAllocOf(d, want)
		case f == fRecord:
			decodeRecordHead(d, k)
		default:
			decodeField(d, k, f)
		}
	}
	h := kernelHead{ID: k.ID, Agent: k.Agent, State: k.State, Alloc: k.Alloc}
	if r := k.Record; r != nil {
		h.Session, h.User, h.Project = r.SessionID, r.OwnerUserID, r.OwnerProjectID
	}
	return h
}

// decodeRecordHead reads a kernel's recovery record field keeping only
// what a history query shows (session, owner, project) and skipping the
// other strings unallocated.
func decodeRecordHead(d *dec, k *model.Kernel) {
	k.Record = nil
	if d.byte() != 1 {
		return
	}
	r := &model.KernelRecord{}
	d.byte() // path: tag, string
	d.skipOrStr(false)
	d.byte() // kernel id: tag, string
	d.skipOrStr(false)
	d.skipOrStr(false) // agent id
	r.SessionID = d.id()
	d.skipOrStr(false) // session type
	r.OwnerUserID = d.iid()
	r.OwnerProjectID = d.iid()
	d.skipOrStr(false) // image
	d.skipOrStr(false) // architecture
	k.Record = r
}

// headFields are the patch fields a history query reads; they come
// first in a record, so the rest is never decoded.
const headFields = 1<<fAgent | 1<<fState | 1<<fAlloc | 1<<fRecord

// sessFields are those the sessions walk reads: the head's and the
// kernel's request (SLOTS), which a replay takes as what it asked.
const sessFields = headFields | 1<<fSlots

// islots reads a SLOTS field (fSlots) as decodeField does, the same
// errors, giving every equal encoding one map when the decoder has an
// interner. The map is shared: it is never changed once made.
func (d *dec) islots() model.ResourceSlot {
	var k model.Kernel
	if d.in == nil {
		decodeField(d, &k, fSlots)
		return k.Slots
	}
	start := d.b
	skipField(d, fSlots)
	if d.err != nil {
		return nil
	}
	raw := start[:len(start)-len(d.b)]
	if r, ok := d.in.slots[string(raw)]; ok {
		return r
	}
	sd := dec{b: raw, in: d.in}
	decodeField(&sd, &k, fSlots)
	if sd.err != nil {
		d.fail(sd.err)
		return nil
	}
	if len(raw) <= 4*internLen && len(d.in.slots) < internMax {
		d.in.slots[string(raw)] = k.Slots
	}
	return k.Slots
}

// skipPath reads a path field (fPath) as decodeField does, making no
// string of it.
func skipPath(d *dec) {
	d.byte()
	d.strBytes()
}

// decodePatchHead reads the head fields of a patch record into k,
// keeping only the allocations want accepts, and returns the mask; the
// rest of the record is left unread. A mask without head fields costs
// one uvarint.
func decodePatchHead(d *dec, k *model.Kernel, want *devWant) (mask uint32) {
	mask = uint32(d.uvarint())
	if mask >= 1<<nFields {
		d.fail(fmt.Errorf("field mask %#x", mask))
		return 0
	}
	if mask&headFields == 0 {
		return mask
	}
	for f := 0; f <= fRecord && d.err == nil; f++ {
		switch {
		case mask&(1<<f) == 0:
		case f == fAlloc && want != nil:
			k.Alloc = decodeAllocOf(d, want)
		case f == fRecord:
			decodeRecordHead(d, k)
		default:
			decodeField(d, k, f)
		}
	}
	return mask
}

func decodeKernel(d *dec) *model.Kernel { return decodeKernelSkip(d, 0) }

// decodeKernelSkip is decodeKernel reading the fields in skip (of
// skippable) without building them (decodePatchSkip).
func decodeKernelSkip(d *dec, skip uint32) *model.Kernel {
	k := &model.Kernel{}
	k.ID = model.KernelID(d.id())
	for f := 0; f < nFields && d.err == nil; f++ {
		if skip&(1<<f) != 0 {
			skipField(d, f)
		} else {
			decodeField(d, k, f)
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
