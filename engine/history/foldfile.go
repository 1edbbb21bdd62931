package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/fgtop/fgtop/model"
)

// A sealed segment's fold is kept beside it (seg-….fgf beside seg-….fgh),
// written by the recorder when it seals the segment, or by WriteFold for
// a record made before folds were.
//
// A fold file is outside input. It names the segment it was made of by
// the segment's size and CRC-32C; a fold of another segment, of a
// segment that has a tail (still being written, or left by a crash), or
// one that does not parse whole, is not used: the walk then reads the
// segment, and the answer is the same (Reader.FoldsRefused counts them).
const (
	foldSuffix = ".fgf"
	// foldMagic is also the version of the walk's rules a fold was made
	// by: a fold holds the sessions walk's decisions (a change, a first
	// holding, a head the same), not the record, and is copied with the
	// record and kept as long as its segment. A change to those rules in
	// sessions.go or fold.go changes it (FGHFOLD2, ...), so that older
	// folds are refused and their segments walked by the new rules.
	// FGHFOLD2: the kernels' requests (SLOTS) at their heads and first
	// holdings. FGHFOLD3: a kernel is known (not pending) once its
	// recovery record is, whatever agent that leaves it, and a first
	// holding says whether the record was read then (firstBare).
	// FGHFOLD4: a segment holding a stall of its recorder (recStall)
	// is not folded: its stalls are gaps the walk lists, which a fold
	// does not carry.
	foldMagic = "FGHFOLD4"
	// foldHead: magic, segment size (uint64 LE), segment CRC-32C, body
	// length, body CRC-32C (uint32 LE each).
	foldHead = len(foldMagic) + 8 + 4 + 4 + 4
	// maxFold bounds what a reader reads of a fold file and what its
	// body decompresses to: a busy node's segment (10,000 kernels, a
	// change a second) folds in about 1.5 MiB, 2.3 MiB decompressed.
	maxFold = 16 << 20
	// maxFoldStrings and maxFoldEnts bound what one fold's parse makes
	// however its counts read (zeros decompress from a few KiB into a
	// body that claims millions): the strings of its table, and its
	// allocations' entries all together, about 100,000 for that segment;
	// maxAllocEnts one allocation's (a slot and device each). A fold
	// past them is refused and its segment walked.
	maxFoldStrings = 1 << 20
	maxFoldEnts    = 1 << 21
	maxAllocEnts   = 1 << 16
	// foldNoTime stands for the zero time.
	foldNoTime = math.MinInt64
)

// foldPath is the fold file of the segment at segPath.
func foldPath(segPath string) string {
	return segPath[:len(segPath)-len(segSuffix)] + foldSuffix
}

// foldEnc writes a fold's body: strings once, by index.
type foldEnc struct {
	b    []byte
	strs map[string]uint64
	tab  []string
}

func (e *foldEnc) uv(v uint64)    { e.b = binary.AppendUvarint(e.b, v) }
func (e *foldEnc) bytes(p []byte) { e.uv(uint64(len(p))); e.b = append(e.b, p...) }
func (e *foldEnc) str(s string) {
	i, ok := e.strs[s]
	if !ok {
		i = uint64(len(e.tab))
		e.strs[s] = i
		e.tab = append(e.tab, s)
	}
	e.uv(i)
}

func (e *foldEnc) tm(t time.Time) {
	v := int64(foldNoTime)
	if !t.IsZero() {
		v = t.UnixNano()
	}
	e.b = binary.AppendVarint(e.b, v)
}

func (e *foldEnc) who(id identity, agent bool) {
	if agent {
		e.str(string(id.Agent))
	}
	e.str(id.Session)
	e.str(id.User)
	e.str(id.Project)
}

func (e *foldEnc) fa(fa *flatAlloc) {
	e.uv(uint64(fa.n))
	e.uv(uint64(len(fa.ents)))
	for k := range fa.ents {
		a := &fa.ents[k]
		var fl uint64
		if a.first {
			fl |= 1
		}
		if a.none {
			fl |= 2
		}
		e.uv(fl)
		e.str(string(a.slot))
		if !a.none {
			e.str(string(a.dev))
			e.str(a.amt.String())
		}
	}
}

// slots writes a request (SLOTS), its slots in order.
func (e *foldEnc) slots(r model.ResourceSlot) {
	e.uv(uint64(len(r)))
	for _, n := range r.Names() {
		e.str(string(n))
		e.str(r[n].String())
	}
}

// The entry's flags.
const (
	feInCk = 1 << iota
	feFirst
	feChanged
	feConflict
	feRel
	feRelGone
	fePresent
	fePending
	feHolding
	feWho
	feLearnt
	feHeld
	feSame
	feFirstBare
	feAll = 1<<iota - 1
)

// encodeFold is the fold file of f, made of the segment file seg.
func encodeFold(f *segFold, seg []byte) []byte {
	e := &foldEnc{strs: map[string]uint64{}}
	e.tm(f.end)
	var fl uint64
	if f.clean {
		fl |= 1
	}
	if f.rotated {
		fl |= 2
	}
	if f.rel {
		fl |= 4
	}
	e.uv(fl)
	e.tm(f.rotateAt)
	e.tm(f.last)
	if f.rel {
		e.uv(uint64(f.prevSize))
		e.uv(uint64(f.prevCRC))
		e.uv(uint64(len(f.left)))
		for _, id := range f.left {
			e.str(string(id))
		}
	}
	e.uv(uint64(len(f.journal)))
	for _, j := range f.journal {
		e.bytes(j)
	}
	e.uv(uint64(len(f.ents)))
	for i := range f.ents {
		x := &f.ents[i]
		held := f.heldOf(x)
		var fl uint64
		for _, b := range []struct {
			on  bool
			bit uint64
		}{{x.inCk, feInCk}, {x.first, feFirst}, {x.changed, feChanged}, {x.conflict, feConflict}, {x.rel, feRel},
			{x.relGone, feRelGone}, {x.present, fePresent}, {x.pending, fePending}, {x.holding, feHolding},
			{x.who != (identity{}), feWho}, {x.learnt != (identity{}), feLearnt}, {len(held) > 0, feHeld}, {x.same, feSame},
			{x.firstBare, feFirstBare}} {
			if b.on {
				fl |= b.bit
			}
		}
		e.uv(fl)
		e.str(string(x.id))
		if x.inCk && !x.same {
			e.str(string(x.ck.State))
			e.who(identity{Agent: x.ck.Agent, Session: x.ck.Session, User: x.ck.User, Project: x.ck.Project}, true)
			e.fa(&x.ck.fa)
			e.slots(x.ck.slots)
		}
		if x.first {
			e.tm(x.firstAt)
			e.str(string(x.firstAgent))
			e.fa(&x.firstFA)
			e.slots(x.firstSlots)
		}
		if fl&feWho != 0 {
			e.who(x.who, false)
		}
		if fl&feLearnt != 0 {
			e.who(x.learnt, true)
		}
		if fl&feHeld != 0 {
			e.uv(uint64(len(held)))
			for _, h := range held {
				e.str(string(h.slot))
				e.str(string(h.dev))
				e.str(h.amt.String())
			}
		}
		if x.rel {
			e.tm(x.relAt)
		}
	}
	// The strings first, so that a reader knows them all before it meets
	// an index; each as the record stores an id (a UUID in 16 bytes).
	te := &enc{b: binary.AppendUvarint(nil, uint64(len(e.tab)))}
	for _, s := range e.tab {
		te.id(s)
	}
	return frameFold(append(te.b, e.b...), seg)
}

// frameFold is a fold file of raw, the body before compression, named to
// the segment whose bytes are seg.
func frameFold(raw, seg []byte) []byte {
	body := foldZ().enc.EncodeAll(raw, nil)
	out := make([]byte, foldHead, foldHead+len(body))
	copy(out, foldMagic)
	n := len(foldMagic)
	binary.LittleEndian.PutUint64(out[n:], uint64(len(seg)))
	binary.LittleEndian.PutUint32(out[n+8:], crc32.Checksum(seg, castagnoli))
	binary.LittleEndian.PutUint32(out[n+12:], uint32(len(body)))
	binary.LittleEndian.PutUint32(out[n+16:], crc32.Checksum(body, castagnoli))
	return append(out, body...)
}

// foldCodec is the zstd encoder and bounded decoder of folds, made once
// (each holds megabytes of tables) and safe for concurrent use.
type foldCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

var foldZ = sync.OnceValue(func() foldCodec {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(fmt.Sprintf("history: zstd writer: %v", err)) // only for bad options
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxFold))
	if err != nil {
		panic(fmt.Sprintf("history: zstd reader: %v", err))
	}
	return foldCodec{enc: enc, dec: dec}
})

// errFold is a fold file that does not parse.
var errFold = errors.New("history: segment fold")

// foldDec reads a fold's body; the first error sticks.
type foldDec struct {
	b    []byte
	err  error
	tab  []string
	decs []model.Dec
	seen []bool
	// slab: room for the entries' allocations (a segment's fold holds
	// tens of thousands); slabs every slab used, spare those of a fold
	// joined already, to use again (foldBuf).
	slab         []allocEnt
	slabs, spare [][]allocEnt
	// made counts the entries given room so far (maxFoldEnts).
	made int
	// reqs: the requests read so far by their bytes (slots): a fold's
	// kernels ask a few, each one map; shared, when not nil, those of
	// the other folds of the read, by their text.
	reqs   map[string]model.ResourceSlot
	shared *reqCache
	key    []byte
}

// reqCache shares the requests (SLOTS) the folds of one read decode,
// by their text: a week's folds each name the same few thousand, and a
// map of each in each fold was 100 MB and as many more in the replay's
// requests made of them. Safe for concurrent use; bounded.
type reqCache struct {
	mu sync.Mutex
	m  map[string]model.ResourceSlot
}

func newReqCache() *reqCache { return &reqCache{m: map[string]model.ResourceSlot{}} }

// ents is room for m allocation entries; nil, failing, past maxAllocEnts
// for one allocation or maxFoldEnts for the fold.
func (d *foldDec) ents(m int) []allocEnt {
	if !d.room(m) {
		return nil
	}
	if cap(d.slab)-len(d.slab) < m {
		d.slab = nil
		for len(d.spare) > 0 && d.slab == nil {
			if s := d.spare[len(d.spare)-1]; cap(s) >= m {
				d.slab = s[:0]
			}
			d.spare = d.spare[:len(d.spare)-1]
		}
		if d.slab == nil {
			d.slab = make([]allocEnt, 0, max(m, 4096))
		}
		d.slabs = append(d.slabs, d.slab)
	}
	k := len(d.slab)
	d.slab = d.slab[:k+m]
	return d.slab[k : k+m : k+m]
}

// room counts m allocation entries to the fold's (ents without the
// room); false, failing, past maxAllocEnts or maxFoldEnts.
func (d *foldDec) room(m int) bool {
	if m > maxAllocEnts || d.made+m > maxFoldEnts {
		d.fail("more allocation entries than a fold holds")
		return false
	}
	d.made += m
	return true
}

func (d *foldDec) fail(why string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errFold, why)
	}
}

func (d *foldDec) uv() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// countOf is a count of items of at least min bytes each: no count
// claims more than the bytes left could hold.
func (d *foldDec) countOf(min uint64) int {
	v := d.uv()
	if v > uint64(len(d.b))/min {
		d.fail("count past the end")
		return 0
	}
	return int(v)
}

func (d *foldDec) tm() time.Time {
	if d.err != nil {
		return time.Time{}
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad time")
		return time.Time{}
	}
	d.b = d.b[n:]
	if v == foldNoTime {
		return time.Time{}
	}
	return time.Unix(0, v)
}

func (d *foldDec) bytes() []byte {
	n := d.countOf(1)
	if d.err != nil {
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *foldDec) str() string {
	i := d.uv()
	if i >= uint64(len(d.tab)) {
		d.fail("string index out of range")
		return ""
	}
	return d.tab[i]
}

func (d *foldDec) amt() model.Dec {
	i := d.uv()
	if i >= uint64(len(d.tab)) {
		d.fail("amount index out of range")
		return model.Dec{}
	}
	if !d.seen[i] {
		v, err := model.ParseDec(d.tab[i])
		if err != nil {
			d.fail(fmt.Sprintf("amount %q", d.tab[i]))
			return model.Dec{}
		}
		d.decs[i], d.seen[i] = v, true
	}
	return d.decs[i]
}

func (d *foldDec) who(agent bool) identity {
	var id identity
	if agent {
		id.Agent = model.AgentID(d.str())
	}
	id.Session, id.User, id.Project = d.str(), d.str(), d.str()
	return id
}

// fa reads an allocation as decodeFlat made it: its entries in order,
// each slot's devices after its first, and its irregular said again.
func (d *foldDec) fa() flatAlloc {
	var fa flatAlloc
	n := d.countOf(1)
	m := d.countOf(2) // flags and slot at least
	if d.err != nil {
		return fa
	}
	fa.n = n
	if m > 0 {
		fa.ents = d.ents(m)
	}
	firsts := 0
	for k := 0; k < m && d.err == nil; k++ {
		a := &fa.ents[k]
		fl := d.uv()
		if fl > 3 {
			d.fail("bad entry flags")
		}
		a.first, a.none = fl&1 != 0, fl&2 != 0
		a.slot = model.SlotName(d.str())
		if a.first {
			firsts++
		} else if k == 0 || a.none || fa.ents[k-1].none || a.slot != fa.ents[k-1].slot {
			d.fail("an entry outside its slot")
			break
		}
		if a.none {
			continue
		}
		a.dev = model.DeviceID(d.str())
		a.amt = d.amt()
	}
	if d.err == nil && firsts != n {
		d.fail("slot count does not match its entries")
	}
	if d.err == nil {
		fa.irregular = irregularEnts(fa.ents)
	}
	return fa
}

// slots reads a request as foldEnc.slots wrote it: its slots in order,
// each once, counted to the fold's entries (room).
func (d *foldDec) slots() model.ResourceSlot {
	n := d.countOf(2)
	if d.err != nil || n == 0 || !d.room(n) {
		return nil
	}
	start := d.b
	var prev string
	for k := 0; k < n && d.err == nil; k++ {
		slot := d.str()
		d.amt()
		if k > 0 && slot <= prev {
			d.fail("a request's slots out of order")
		}
		prev = slot
	}
	if d.err != nil {
		return nil
	}
	raw := start[:len(start)-len(d.b)]
	if r, ok := d.reqs[string(raw)]; ok {
		return r
	}
	// Read again, checked: the names and amounts' texts, for the shared
	// key, and their values.
	rd := &foldDec{b: raw, tab: d.tab, decs: d.decs, seen: d.seen}
	type ent struct {
		slot model.SlotName
		amt  model.Dec
	}
	var ea [8]ent
	ents := ea[:0]
	d.key = d.key[:0]
	for range n {
		slot := rd.str()
		i := rd.uv()
		d.key = append(append(append(append(d.key, slot...), 0), d.tab[i]...), 0)
		ents = append(ents, ent{model.SlotName(slot), d.decs[i]})
	}
	var r model.ResourceSlot
	if d.shared != nil {
		d.shared.mu.Lock()
		r = d.shared.m[string(d.key)]
		d.shared.mu.Unlock()
	}
	if r == nil {
		r = make(model.ResourceSlot, n)
		for _, e := range ents {
			r[e.slot] = e.amt
		}
		if d.shared != nil {
			d.shared.mu.Lock()
			if len(d.shared.m) < 1<<14 {
				d.shared.m[string(d.key)] = r
			}
			d.shared.mu.Unlock()
		}
	}
	if d.reqs == nil {
		d.reqs = map[string]model.ResourceSlot{}
	}
	if len(d.reqs) < 1<<12 {
		d.reqs[string(raw)] = r
	}
	return r
}

// irregularEnts is decodeFlat's irregular of the entries it made: a
// slot with no device, a slot named twice, a device named twice in a
// slot. By comparing pairs for a kernel's handful of entries, through
// sets past that (a hostile fold may hold a million).
func irregularEnts(ents []allocEnt) bool {
	if len(ents) > 32 {
		slots := map[model.SlotName]bool{}
		var devs map[model.DeviceID]bool
		for i := range ents {
			e := &ents[i]
			if e.none {
				return true
			}
			if e.first {
				if slots[e.slot] {
					return true
				}
				slots[e.slot] = true
				devs = map[model.DeviceID]bool{}
			}
			if devs[e.dev] {
				return true
			}
			devs[e.dev] = true
		}
		return false
	}
	start := 0
	for i := range ents {
		if ents[i].none {
			return true
		}
		if ents[i].first {
			start = i
			for k := range start {
				if ents[k].first && ents[k].slot == ents[i].slot {
					return true
				}
			}
		}
		for b := start; b < i; b++ {
			if ents[b].dev == ents[i].dev {
				return true
			}
		}
	}
	return false
}

// parseFold reads a fold file made of a segment of segSize bytes whose
// CRC-32C is segCRC, starting at start.
func parseFold(b []byte, segSize int64, segCRC uint32, start time.Time) (*segFold, error) {
	return parseFoldInto(b, segSize, segCRC, start, foldBuf{}, nil)
}

// foldBuf is the room a fold's entries were decoded into, handed back
// by the walk once joined for the next fold: a week's folds decoded
// 74 MB of allocations' entries, each fold's garbage once joined.
type foldBuf struct {
	ents  []foldEnt
	slabs [][]allocEnt
}

// parseFoldInto is parseFold decoding the entries into spare's room
// where it has enough (a walk's buffer, handed back once joined).
func parseFoldInto(b []byte, segSize int64, segCRC uint32, start time.Time, spare foldBuf, reqs *reqCache) (*segFold, error) {
	if len(b) < foldHead || string(b[:len(foldMagic)]) != foldMagic {
		return nil, fmt.Errorf("%w: not a fold fgtop wrote", errFold)
	}
	n := len(foldMagic)
	if binary.LittleEndian.Uint64(b[n:]) != uint64(segSize) || binary.LittleEndian.Uint32(b[n+8:]) != segCRC {
		return nil, fmt.Errorf("%w: made of another segment than the one beside it", errFold)
	}
	body := b[foldHead:]
	if uint64(binary.LittleEndian.Uint32(b[n+12:])) != uint64(len(body)) || binary.LittleEndian.Uint32(b[n+16:]) != crc32.Checksum(body, castagnoli) {
		return nil, fmt.Errorf("%w: cut short or damaged", errFold)
	}
	body, err := foldZ().dec.DecodeAll(body, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errFold, err)
	}
	return parseFoldBodyInto(body, start, spare, reqs)
}

// parseFoldBody reads a fold's decompressed body.
func parseFoldBody(body []byte, start time.Time) (*segFold, error) {
	return parseFoldBodyInto(body, start, foldBuf{}, nil)
}

// parseFoldBodyInto is parseFoldBody into spare's room (parseFoldInto).
func parseFoldBodyInto(body []byte, start time.Time, spare foldBuf, reqs *reqCache) (*segFold, error) {
	d := &foldDec{b: body, shared: reqs, spare: spare.slabs}
	// A string is a tag and a length at least.
	nt := d.countOf(2)
	if nt > maxFoldStrings {
		d.fail("more strings than a fold holds")
	}
	d.tab = make([]string, 0, min(nt, 1<<16))
	td := &dec{b: d.b}
	for range nt {
		if d.err != nil || td.err != nil {
			break
		}
		d.tab = append(d.tab, td.id())
	}
	if td.err != nil {
		d.fail("bad string")
	}
	d.b = td.b
	d.decs, d.seen = make([]model.Dec, len(d.tab)), make([]bool, len(d.tab))
	f := &segFold{start: start, end: d.tm(), inCk: map[model.KernelID]bool{}}
	fl := d.uv()
	if fl > 7 {
		d.fail("bad flags")
	}
	f.clean, f.rotated, f.rel = fl&1 != 0, fl&2 != 0, fl&4 != 0
	f.rotateAt = d.tm()
	f.last = d.tm()
	if f.rel {
		size, crc := d.uv(), d.uv()
		if size > maxSegmentFile || crc > math.MaxUint32 {
			d.fail("bad segment before")
		}
		f.prevSize, f.prevCRC = int64(size), uint32(crc)
		nl := d.countOf(1)
		if d.err == nil {
			f.left = make([]model.KernelID, 0, nl)
		}
		for k := 0; k < nl && d.err == nil; k++ {
			f.left = append(f.left, model.KernelID(d.str()))
		}
		f.inCk = nil
	}
	nj := d.countOf(1)
	for k := 0; k < nj && d.err == nil; k++ {
		f.journal = append(f.journal, d.bytes())
	}
	// An entry is its flags and id at least.
	ne := d.countOf(2)
	// The room made ahead is bounded whatever the count says.
	if d.err == nil && ne > 0 {
		if n := min(ne, 1<<16); cap(spare.ents) >= n {
			f.ents = spare.ents[:0]
		} else {
			f.ents = make([]foldEnt, 0, n)
		}
		if !f.rel {
			f.inCk = make(map[model.KernelID]bool, min(ne, 1<<16))
		}
	}
	// The kernels met so far: an absolute fold's inCk holds them all (false
	// for those its checkpoint lacks, which applyFold reads as absent), so
	// that a segment's 20,000 kernels are not put in two maps.
	seen := f.inCk
	if f.rel {
		seen = make(map[model.KernelID]bool, min(ne, 1<<16))
	}
	for k := 0; k < ne && d.err == nil; k++ {
		// Decoded in its place: an entry is hundreds of bytes, and a
		// fold tens of thousands of them. One that fails leaves the
		// fold, and the fold is dropped.
		f.ents = append(f.ents, foldEnt{})
		x := &f.ents[len(f.ents)-1]
		fl := d.uv()
		if fl&^feAll != 0 {
			d.fail("bad entry flags")
			break
		}
		x.inCk, x.first, x.changed, x.conflict = fl&feInCk != 0, fl&feFirst != 0, fl&feChanged != 0, fl&feConflict != 0
		x.rel, x.relGone, x.present, x.pending, x.holding = fl&feRel != 0, fl&feRelGone != 0, fl&fePresent != 0, fl&fePending != 0, fl&feHolding != 0
		x.same, x.firstBare = fl&feSame != 0, fl&feFirstBare != 0
		if x.same && (!f.rel || !x.inCk) {
			d.fail("an entry the walk could not have made")
			break
		}
		x.id = model.KernelID(d.str())
		if _, dup := seen[x.id]; dup {
			d.fail("a kernel listed twice")
			break
		}
		seen[x.id] = x.inCk && !f.rel
		if x.inCk && !x.same {
			x.ck.ID = x.id
			x.ck.State = model.KernelState(d.str())
			id := d.who(true)
			x.ck.Agent, x.ck.Session, x.ck.User, x.ck.Project = id.Agent, id.Session, id.User, id.Project
			x.ck.fa = d.fa()
			x.ck.slots = d.slots()
		}
		if x.first {
			x.firstAt = d.tm()
			x.firstAgent = model.AgentID(d.str())
			x.firstFA = d.fa()
			x.firstSlots = d.slots()
		}
		if fl&feWho != 0 {
			x.who = d.who(false)
		}
		if fl&feLearnt != 0 {
			x.learnt = d.who(true)
		}
		if fl&feHeld != 0 {
			// Checked as a decode would (heldOf decodes them if asked).
			m := d.countOf(3)
			if d.err == nil {
				d.room(m)
			}
			raw := d.b
			for j := 0; j < m && d.err == nil; j++ {
				d.str()
				d.str()
				d.amt()
			}
			if d.err == nil && m > 0 {
				x.heldRaw, x.heldN = raw[:len(raw)-len(d.b):len(raw)-len(d.b)], m
			}
		}
		if x.rel {
			x.relAt = d.tm()
		}
		// What the walk could never have folded: a departure or a
		// holding of a kernel that never held, one followed nowhere
		// that is pending or holding, a first holding's record where
		// there was none.
		if (x.rel || x.holding) && !x.first && !x.same && !(x.inCk && x.ck.fa.holds()) || !x.present && (x.pending || x.holding) ||
			x.firstBare && !x.first {
			d.fail("an entry the walk could not have made")
			break
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("bytes after the end")
	}
	if d.err != nil {
		return nil, d.err
	}
	f.tab, f.decs, f.seen, f.slabs = d.tab, d.decs, d.seen, d.slabs
	return f, nil
}

// readBounded reads a regular file of at most max bytes, in one
// allocation of its size.
func readBounded(path string, max int64) ([]byte, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d read", filepath.Base(path), st.Size(), max)
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	// Longer than it said: it is being written.
	if n, _ := f.Read(make([]byte, 1)); n > 0 {
		return nil, fmt.Errorf("%s: grows as it is read", filepath.Base(path))
	}
	return b, nil
}

// segIdentity is the size and CRC-32C of the segment file at path, read
// through a small buffer (the walk does not need its bytes).
func segIdentity(path string) (int64, uint32, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	if st.Size() > maxSegmentFile {
		return 0, 0, fmt.Errorf("%s: more than a segment", filepath.Base(path))
	}
	h := crc32.New(castagnoli)
	n, err := io.CopyBuffer(h, io.LimitReader(f, maxSegmentFile+1), make([]byte, 256<<10))
	if err != nil {
		return 0, 0, err
	}
	return n, h.Sum32(), nil
}

// prevIs reports whether relative fold f is of the segment after prev:
// prev's size and CRC-32C are those f names.
func prevIs(f *segFold, prev segFile) bool {
	size, crc, err := segIdentity(prev.Path)
	return err == nil && size == f.prevSize && crc == f.prevCRC
}

// FoldStats counts what a reader made of the fold files beside its
// segments.
type FoldStats struct {
	// Used: folds parsed whole, of the segment beside them. Refused: a
	// fold file there that is damaged, stale (of another segment) or
	// beside a segment with a tail; its segment was walked.
	Used, Refused atomic.Int64
	// Reused: folds decoded into the entries' buffer of one the walk had
	// joined already (loadFoldBuf).
	Reused atomic.Int64
}

// loadFold is the fold of segment sf when the file beside it is of it,
// the segment has no tail and, for a fold relative to the segment
// before, that segment is prev; nil otherwise (the walk reads the
// segment). A fold file that is there but not usable is counted.
func (r *Reader) loadFold(sf segFile, prev *segFile) *segFold {
	return r.loadFoldBuf(sf, prev, nil, nil)
}

// loadFoldBuf is loadFold decoding the entries into a buffer from bufs
// when one waits there (never waiting for one), and naming bufs as where
// the fold's entries go once the walk has joined it (foldStep): a week's
// folds are 150 MB of entries, each fold's dead once joined, and fresh
// memory for each was a fifth of the read.
func (r *Reader) loadFoldBuf(sf segFile, prev *segFile, bufs chan foldBuf, reqs *reqCache) *segFold {
	b, err := readBounded(foldPath(sf.Path), maxFold)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	refuse := func() *segFold { r.Folds.Refused.Add(1); return nil }
	if err != nil {
		return refuse()
	}
	if _, err := os.Lstat(tailPath(sf.Path)); !errors.Is(err, os.ErrNotExist) {
		return refuse()
	}
	size, crc, err := segIdentity(sf.Path)
	if err != nil {
		return refuse()
	}
	var spare foldBuf
	select {
	case spare = <-bufs:
	default:
	}
	f, err := parseFoldInto(b, size, crc, sf.Start, spare, reqs)
	if err != nil {
		return refuse()
	}
	f.give = bufs
	if spare.ents != nil {
		r.Folds.Reused.Add(1)
	}
	if f.rel {
		if prev == nil {
			// The walk begins here: the segment it is relative to is
			// not read.
			return nil
		}
		if !prevIs(f, *prev) {
			return refuse()
		}
	}
	r.Folds.Used.Add(1)
	return f
}

// WriteFold folds the sealed segment at segPath beside it (a temporary
// file renamed over, so that a reader never sees half of one). A segment
// that is damaged or lacks its checkpoint gets none. It is what the
// recorder does at each seal, and adds folds to a record made before.
func WriteFold(segPath string) error {
	start, ok := parseSegName(filepath.Base(segPath))
	if !ok {
		return fmt.Errorf("history: %s is not named as a segment", segPath)
	}
	if _, err := os.Lstat(tailPath(segPath)); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("history: fold %s: it has a tail (not sealed)", filepath.Base(segPath))
	}
	seg, err := readBounded(segPath, maxSegmentFile)
	if err != nil {
		return fmt.Errorf("history: fold: %w", err)
	}
	rd := &Reader{dir: filepath.Dir(segPath), segs: []segFile{{Path: segPath, Start: start, Size: int64(len(seg))}}}
	// Relative to the segment before it, where that one is sealed and
	// continued into it.
	var prev *segRead
	var prevSize int64
	var prevCRC uint32
	if segs, err := listSegments(filepath.Dir(segPath)); err == nil {
		for i := 1; i < len(segs); i++ {
			if segs[i].Path != segPath {
				continue
			}
			p := segs[i-1]
			if _, err := os.Lstat(tailPath(p.Path)); !errors.Is(err, os.ErrNotExist) {
				break
			}
			if prevSize, prevCRC, err = segIdentity(p.Path); err == nil {
				prd := &Reader{dir: rd.dir, segs: []segFile{p}}
				prev = prd.read(0, false)
			}
		}
	}
	f, ok := buildFoldAfter(rd.read(0, false), prev, prevSize, prevCRC, newInterner())
	if !ok {
		return nil
	}
	out := encodeFold(f, seg)
	tmp, err := os.CreateTemp(filepath.Dir(segPath), ".fold-*")
	if err != nil {
		return fmt.Errorf("history: fold: %w", err)
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("history: fold: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("history: fold: %w", err)
	}
	if err := os.Rename(tmp.Name(), foldPath(segPath)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("history: fold: %w", err)
	}
	// Retention may have dropped the segment meanwhile: its fold would
	// stay.
	if _, err := os.Lstat(segPath); errors.Is(err, os.ErrNotExist) {
		os.Remove(foldPath(segPath))
	}
	return nil
}
