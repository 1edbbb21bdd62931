package history

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/fgtop/fgtop/internal/safefile"
)

// Version is the on-disk format version written in every segment header.
// docs/history.md describes it; a reader refuses a version it does not know.
// Version 2 adds the held share and memory size to the per-minute summary;
// version 3 the tail file (tail.go: the newest records, uncompressed, beside
// the segment). Older segments read as before (version 1 summaries lack the
// version 2 fields, and neither has a tail).
const Version = 3

// minVersion is the oldest format version this fgtop still reads.
const minVersion = 1

// A segment file is a header, one checkpoint chunk and any number of delta
// chunks. Every chunk is framed with its length and a CRC-32C, so a chunk
// cut off by a crash or a full disk, or damaged later, is found and
// nothing before it is lost.
const (
	segMagic   = "FGTOPHST"
	headerSize = 16 // magic, version (uint32 LE), reserved (uint32)
	chunkHead  = 9  // kind, length (uint32 LE), CRC-32C (uint32 LE) of kind+payload
	// maxChunk bounds one chunk's payload (a checkpoint of a 10,000-kernel
	// node is about 1 MiB compressed).
	maxChunk = 64 << 20
	// maxRecord bounds one decompressed record.
	maxRecord = 16 << 20
	// maxSegmentRaw bounds what one stream of a segment (its checkpoint,
	// its deltas) may decompress to, whatever the segment's size; rawFloor
	// and rawRatio bound it by the segment's size first (rawCap): records
	// compress two- to fourfold, a quiet node's heartbeats a few dozen
	// times, so a file that claims more holds no record of ours (a
	// compression bomb: 98 KiB of zstd can say 1 GiB).
	maxSegmentRaw = 1 << 30
	rawFloor      = 64 << 20
	rawRatio      = 64
	// maxSegmentFile bounds the size of a segment file a reader reads: a
	// 12-hour segment of a 10,000-kernel node is about 6 MiB.
	maxSegmentFile = 256 << 20
	segPrefix      = "seg-"
	segSuffix      = ".fgh"
	lockName       = "LOCK"
)

// Chunk kinds.
const (
	chunkCheckpoint byte = 'C' // a complete zstd frame: the full state
	chunkDelta      byte = 'D' // the next part of the segment's delta stream
)

// Record types inside the decompressed streams. Records of one snapshot
// come before its tick and count only once the tick is read.
const (
	recTick        byte = 'T' // seq, time: the snapshot is complete
	recMeta        byte = 'M' // JSON meta: node, mode, source, config, allocator
	recDevices     byte = 'D' // JSON devices (inventory order)
	recAgents      byte = 'A' // JSON agents
	recTotals      byte = 'a' // binary agents' kernels and totals (in agent order)
	recUsage       byte = 'U' // binary one device's totals
	recUsageGone   byte = 'u' // a device nothing is held on any more
	recUsageCalc   byte = 'V' // a device's totals follow from its kernels again
	recKernel      byte = 'K' // binary kernel
	recKernelGone  byte = 'k' // a kernel disappeared
	recKernelPatch byte = 'J' // binary: the fields of a kernel that changed
	recIssues      byte = 'I' // binary issue list
	recMinute      byte = 'S' // JSON per-minute summary (stands alone)
	recBeat        byte = 'H' // the recorder was alive at this time (stands alone)
	recEnd         byte = 'Z' // the recorder stopped cleanly (stands alone)
	recRotate      byte = 'R' // the next segment continues this one (stands alone)
	recStall       byte = 'W' // from, to: the recorder was not running, or was held up, between (stands alone)
	recJournal     byte = 'P' // JSON: an agent.toml journal record, a partition as applied (stands alone)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func segmentHeader() []byte {
	h := make([]byte, headerSize)
	copy(h, segMagic)
	binary.LittleEndian.PutUint32(h[8:], Version)
	return h
}

func appendChunk(dst []byte, kind byte, payload []byte) []byte {
	var h [chunkHead]byte
	h[0] = kind
	binary.LittleEndian.PutUint32(h[1:], uint32(len(payload)))
	c := crc32.Update(crc32.Checksum(h[:1], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(h[5:], c)
	return append(append(dst, h[:]...), payload...)
}

func appendRecord(dst []byte, typ byte, body []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(body)+1))
	dst = append(dst, typ)
	return append(dst, body...)
}

// segName is a segment's file name: its first snapshot's time in
// nanoseconds, zero-padded so names sort by time.
func segName(start time.Time) string {
	return fmt.Sprintf("%s%020d%s", segPrefix, start.UnixNano(), segSuffix)
}

func parseSegName(name string) (time.Time, bool) {
	if !strings.HasPrefix(name, segPrefix) || !strings.HasSuffix(name, segSuffix) {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(name, segPrefix), segSuffix), 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// segFile is one segment in a directory listing.
type segFile struct {
	Path  string
	Start time.Time
	Size  int64
}

// listSegments returns the directory's segments, oldest first.
func listSegments(dir string) ([]segFile, error) {
	out, _, err := listSegmentsNoted(dir)
	return out, err
}

// listSegmentsNoted is listSegments that also says which files named like
// a segment it left out because they are not regular files (a FIFO, a
// link, a directory): a reader says so rather than skip them silently.
func listSegmentsNoted(dir string) ([]segFile, []Skipped, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrPermission) {
		// The console's :at and :span reach this where the commands
		// check first (histdir.ForReading): the same words.
		return nil, nil, fmt.Errorf("cannot read the history at %s: this user may not read the directory (%w; a recorder makes it mode 0700): run fgtop as the recorder's user, or as root", dir, fs.ErrPermission)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("history %s: %w", dir, err)
	}
	var out []segFile
	var odd []Skipped
	for _, e := range ents {
		t, ok := parseSegName(e.Name())
		if !ok {
			continue
		}
		if !e.Type().IsRegular() {
			odd = append(odd, Skipped{Path: filepath.Join(dir, e.Name()),
				Why: safefile.Kind(e.Type()) + ", not a segment fgtop wrote (fgtop reads only regular files; move it out of the history directory)"})
			continue
		}
		var size int64
		if fi, err := e.Info(); err == nil {
			size = fi.Size()
		}
		out = append(out, segFile{Path: filepath.Join(dir, e.Name()), Start: t, Size: size})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out, odd, nil
}

// segData is what could be read of one segment: the checkpoint's records
// and the delta stream's, each decompressed, up to the first damage.
type segData struct {
	Checkpoint []byte
	Deltas     []byte
	// Damage says why reading stopped before the end of the file ("" when
	// it did not); Offset is where.
	Damage string
	Offset int64
	// Torn: the damage is a last chunk cut short, as a crash or a full
	// disk leaves it, rather than bad bytes followed by more.
	Torn bool
	// deltaZ is the compressed delta stream, its chunks' payloads in the
	// file's bytes, when the caller decompresses it as it reads (lazy): a
	// query about an early moment stops there.
	deltaZ [][]byte
	// End is the offset where the intact chunks end; deltaBad: the delta
	// stream did not decompress (a tail cannot continue it then).
	End      int64
	deltaBad bool
	// tailLost: Damage is a tail file that cannot be used (attachTail),
	// which a segment that ends with its end or rotate record does not
	// need (walker.scan).
	tailLost bool
	// Tail holds the records of the segment's tail file when the delta
	// stream is left compressed (lazy): they follow the stream.
	Tail []byte
	// size is the segment file's, limit what each of its streams may
	// decompress to (rawCap of size; capOf); ctx stops a lazy stream's
	// decompression.
	size, limit int64
	ctx         context.Context
}

// parseSegment reads a segment file's bytes. skipCheckpoint leaves the
// checkpoint compressed (a query that carries state over from the
// previous segment does not need it).
func parseSegment(b []byte, skipCheckpoint bool, dec *zstd.Decoder) (*segData, error) {
	return parseSegmentOf(b, skipCheckpoint, false, dec, nil, nil)
}

// segBufs are buffers a reader reuses from one segment to the next, when
// its caller keeps no slice of a segment's bytes past the segment: the
// file, the compressed delta stream, the checkpoint.
type segBufs struct {
	file, z, ck []byte
}

// parseSegmentOf is parseSegment; lazy leaves the delta stream
// compressed, and buf, when not nil, is a buffer to decompress it into
// (the caller's, reused from segment to segment).
func parseSegmentOf(b []byte, skipCheckpoint, lazy bool, dec *zstd.Decoder, buf []byte, sb *segBufs) (*segData, error) {
	return parseSegmentCtx(context.Background(), b, skipCheckpoint, lazy, dec, buf, sb)
}

// parseSegmentCtx is parseSegmentOf stopping once ctx is done.
func parseSegmentCtx(ctx context.Context, b []byte, skipCheckpoint, lazy bool, dec *zstd.Decoder, buf []byte, sb *segBufs) (*segData, error) {
	return parseSegmentCap(ctx, b, skipCheckpoint, lazy, dec, buf, sb, rawCap(int64(len(b))))
}

// parseSegmentCap is parseSegmentCtx with each stream capped at limit
// (the fuzz targets' smaller cap: a bomb costs them milliseconds).
func parseSegmentCap(ctx context.Context, b []byte, skipCheckpoint, lazy bool, dec *zstd.Decoder, buf []byte, sb *segBufs, limit int64) (*segData, error) {
	if err := checkHeader(b); err != nil {
		return nil, err
	}
	sd := &segData{size: int64(len(b)), limit: limit, ctx: ctx}
	off := headerSize
	// The deltas are most of a segment: room for them all at once, when
	// they are decompressed here.
	var deltaZ []byte
	var chunks [][]byte
	if !lazy {
		if sb != nil {
			deltaZ = slices.Grow(sb.z[:0], len(b))
			defer func() { sb.z = deltaZ[:0] }()
		} else {
			deltaZ = make([]byte, 0, len(b))
		}
	} else {
		// A chunk a second of changes, ~140 bytes each on a busy node.
		chunks = make([][]byte, 0, len(b)/128+1)
	}
	first := true
	for off < len(b) {
		rest := b[off:]
		if len(rest) < chunkHead {
			sd.Damage, sd.Offset, sd.Torn = "a chunk header cut short", int64(off), true
			break
		}
		kind := rest[0]
		n := binary.LittleEndian.Uint32(rest[1:])
		sum := binary.LittleEndian.Uint32(rest[5:])
		if (kind != chunkCheckpoint && kind != chunkDelta) || n > maxChunk {
			sd.Damage, sd.Offset = fmt.Sprintf("a chunk header that makes no sense (kind %q, length %d; a chunk is of kind 'C' or 'D' and holds at most %s)", kind, n, sizeWords(maxChunk)), int64(off)
			break
		}
		if uint64(len(rest)-chunkHead) < uint64(n) {
			sd.Damage, sd.Offset, sd.Torn = "the last chunk cut short", int64(off), true
			break
		}
		payload := rest[chunkHead : chunkHead+int(n)]
		if crc32.Update(crc32.Checksum(rest[:1], castagnoli), castagnoli, payload) != sum {
			sd.Damage, sd.Offset = "a chunk whose checksum does not match", int64(off)
			sd.Torn = off+chunkHead+int(n) == len(b)
			break
		}
		if first != (kind == chunkCheckpoint) {
			sd.Damage, sd.Offset = "chunks out of order", int64(off)
			break
		}
		if first {
			if !skipCheckpoint {
				var dst []byte
				if sb != nil {
					dst = sb.ck[:0]
				}
				var h zstd.Header
				if h.Decode(payload) == nil && h.HasFCS {
					// The frame says its size: a claim over the cap fails
					// here, one under it sizes the buffer.
					if h.FrameContentSize > uint64(sd.limit) {
						ce := sd.capOf("its checkpoint")
						ce.claim = h.FrameContentSize
						sd.Damage, sd.Offset = streamDamage("a checkpoint", ce), int64(off)
						return sd, nil
					}
					if cap(dst) < int(h.FrameContentSize) {
						dst = make([]byte, 0, h.FrameContentSize)
					}
				}
				var raw []byte
				var err error
				if h.HasFCS && ctx.Err() == nil {
					// The frame as the recorder writes it: decoded at once,
					// into exactly the room it says (the decoder is made to
					// stop at dst's capacity: a frame that says less than
					// it holds, or a second frame after it, fails there).
					raw, err = dec.DecodeAll(payload, dst[:0:h.FrameContentSize])
					if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrFrameSizeExceeded) {
						err = fmt.Errorf("it holds more than the %s its frame says", sizeWords(int64(h.FrameContentSize)))
					}
				} else {
					raw, err = inflate(ctx, payload, dec, dst, sd.capOf("its checkpoint"), true)
				}
				if sb != nil && err == nil {
					sb.ck = raw[:0]
				}
				if err != nil {
					sd.Damage, sd.Offset = streamDamage("a checkpoint", err), int64(off)
					return sd, nil
				}
				sd.Checkpoint = raw
			} else {
				sd.Checkpoint = []byte{}
			}
			first = false
		} else {
			if lazy {
				chunks = append(chunks, payload)
			} else {
				deltaZ = append(deltaZ, payload...)
			}
		}
		off += chunkHead + int(n)
	}
	sd.End = int64(off)
	if first && sd.Damage == "" {
		sd.Damage, sd.Offset, sd.Torn = "no checkpoint", int64(off), true
	}
	if lazy {
		sd.deltaZ = chunks
	} else if len(deltaZ) > 0 {
		raw, err := decodeStreamCtx(ctx, deltaZ, dec, buf, sd.capOf("its delta stream"))
		sd.Deltas = raw
		if err != nil {
			sd.deltaBad = true
		}
		if err != nil && sd.Damage == "" {
			sd.Damage, sd.Offset = streamDamage("a delta stream", err), int64(off)
		}
	}
	return sd, nil
}

// decodeStream decompresses a zstd stream that may lack its end (the
// writer flushes once a second and closes the frame only when it stops):
// it returns everything up to where the input ends.
func decodeStream(z []byte, dec *zstd.Decoder, buf []byte) ([]byte, error) {
	return decodeStreamCtx(context.Background(), z, dec, buf, &capError{what: "a delta stream", limit: maxSegmentRaw})
}

// decodeStreamCtx is decodeStream up to lim's limit (more is lim) while
// ctx is not done.
func decodeStreamCtx(ctx context.Context, z []byte, dec *zstd.Decoder, buf []byte, lim *capError) ([]byte, error) {
	// Records compress two- to fourfold: room for the high end at once,
	// not doubled and copied over a 12-hour segment, and a reused buffer
	// a little short is replaced by one of the size wanted (bytes.Buffer
	// would double it).
	need := int(min(int64(4*len(z)), 256<<20, lim.limit))
	if cap(buf) < need {
		buf = make([]byte, 0, need+need/8)
	}
	return inflate(ctx, z, dec, buf, lim, false)
}

// inflate decompresses the zstd stream z into dst's room, stopping at
// lim's limit: more is lim (so a bomb costs the cap, never what it
// claims), and a done ctx stops it too. whole: z is a
// complete frame (a checkpoint); otherwise a stream that ends where the
// writer last flushed ends there without an error.
func inflate(ctx context.Context, z []byte, dec *zstd.Decoder, dst []byte, lim *capError, whole bool) ([]byte, error) {
	if err := dec.Reset(bytes.NewReader(z)); err != nil {
		return nil, err
	}
	defer dec.Reset(nil)
	r := newCapReader(ctx, dec, lim)
	out := dst[:0]
	for {
		if len(out) == cap(out) && int64(len(out)) < lim.limit {
			// Doubled, but never past the cap: a stream that runs over
			// it costs at most twice the cap in all.
			nb := make([]byte, len(out), min(max(2*cap(out), 64<<10), int(lim.limit)))
			copy(nb, out)
			out = nb
		}
		k, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+k]
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			if !whole && errors.Is(err, io.ErrUnexpectedEOF) {
				err = nil
			}
			return out, err
		}
	}
}

// recIter walks the records of a decompressed stream.
type recIter struct {
	b   []byte
	err error
}

// next returns the next record's type and body; ok is false at the end or
// at a record that does not fit (err then says so).
func (it *recIter) next() (typ byte, body []byte, ok bool) {
	if len(it.b) == 0 {
		return 0, nil, false
	}
	n, k := binary.Uvarint(it.b)
	if k > 0 && n > maxRecord {
		it.err = fmt.Errorf("a record of %d bytes (a record holds 1 byte to %s)", n, sizeWords(maxRecord))
		return 0, nil, false
	}
	if k <= 0 || n == 0 || n > uint64(len(it.b)-k) {
		// A stream cut where the writer flushed never splits a record,
		// so this is damage.
		it.err = fmt.Errorf("a record cut short or malformed (%d bytes left)", len(it.b))
		return 0, nil, false
	}
	rec := it.b[k : k+int(n)]
	it.b = it.b[k+int(n):]
	return rec[0], rec[1:], true
}

func newDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxSegmentRaw), zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxWindow(32<<20))
}

// streamPiece is how much of a delta stream the decompressing goroutine
// hands over at a time.
const streamPiece = 512 << 10

// streamIter walks the records of a delta stream while another goroutine
// decompresses it ahead (a seek's replay is half decompressing, half
// applying records: on two cores they overlap). The records it returns
// are slices of fresh buffers, never reused, so a state can keep them.
type streamIter struct {
	err    error
	cur    []byte
	ch     chan []byte
	done   chan struct{}
	exited chan struct{}
	// perr is the decompressor's error, set before ch is closed.
	perr error
	// pending is the rest of a piece whose first record was joined to
	// the previous piece's last (join), read after it.
	pending []byte
}

func newStreamIter(z [][]byte, dec *zstd.Decoder) *streamIter {
	return newStreamIterOf(context.Background(), z, dec, nil)
}

// newStreamIterOf is newStreamIter decompressing at most lim's limit
// (more is lim; nil: maxSegmentRaw) while ctx is not done.
func newStreamIterOf(ctx context.Context, z [][]byte, dec *zstd.Decoder, lim *capError) *streamIter {
	// Records compress two- to fourfold: a short stream (a segment just
	// begun) gets a piece its size, not 512 KiB.
	n := 0
	for _, c := range z {
		n += len(c)
	}
	return newStreamIterCap(ctx, z, dec, min(streamPiece, max(4<<10, 4*n)), lim)
}

// newStreamIterSize is newStreamIter handing over piece bytes at a time.
func newStreamIterSize(z [][]byte, dec *zstd.Decoder, piece int) *streamIter {
	return newStreamIterCap(context.Background(), z, dec, piece, nil)
}

func newStreamIterCap(ctx context.Context, z [][]byte, dec *zstd.Decoder, piece int, lim *capError) *streamIter {
	if lim == nil {
		lim = &capError{what: "a delta stream", limit: maxSegmentRaw}
	}
	if err := dec.Reset(&chunksReader{cs: z}); err != nil {
		return &streamIter{err: err}
	}
	it := &streamIter{ch: make(chan []byte, 4), done: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(it.exited)
		defer close(it.ch)
		r := newCapReader(ctx, dec, lim)
		for {
			buf := make([]byte, piece)
			n, err := io.ReadFull(r, buf)
			if n > 0 {
				select {
				case it.ch <- buf[:n]:
				case <-it.done:
					return
				}
			}
			if err != nil {
				// The stream's end where the writer last flushed (a torn
				// tail) is an end, not an error.
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					it.perr = err
				}
				return
			}
		}
	}()
	return it
}

// chunksReader reads a run of byte slices as one stream (the delta
// chunks' payloads where they lie in the file's bytes, not copied
// together).
type chunksReader struct {
	cs [][]byte
	// i and off: where the next byte is (the slices are not changed: the
	// segment's data may be read again).
	i, off int
}

func (r *chunksReader) Read(p []byte) (int, error) {
	for r.i < len(r.cs) && r.off == len(r.cs[r.i]) {
		r.i, r.off = r.i+1, 0
	}
	if r.i == len(r.cs) {
		return 0, io.EOF
	}
	n := copy(p, r.cs[r.i][r.off:])
	r.off += n
	return n, nil
}

// close stops the decompressing goroutine and waits for it: the decoder
// is the caller's again.
func (it *streamIter) close() {
	if it.done == nil {
		return
	}
	select {
	case <-it.done:
	default:
		close(it.done)
	}
	<-it.exited
}

// join returns what to read next when a record begins in it.cur and goes
// on in piece p: that record alone copied whole, followed by the rest of
// p (records already returned keep the old buffers).
func (it *streamIter) join(p []byte) []byte {
	var head [binary.MaxVarintLen64]byte
	h := append(head[:0], it.cur[:min(len(it.cur), len(head))]...)
	h = append(h, p[:min(len(p), len(head)-len(h))]...)
	n, k := binary.Uvarint(h)
	if k > 0 && n > 0 && n <= maxRecord {
		total, have := k+int(n), len(it.cur)
		if need := total - have; need > 0 && need <= len(p) {
			rec := make([]byte, 0, total)
			rec = append(append(rec, it.cur...), p[:need]...)
			// The record, then p after it: two buffers, read in turn.
			it.pending = p[need:]
			return rec
		}
	}
	// A record longer than the piece, or a length still cut short: join
	// the rest to the whole piece.
	return append(append(make([]byte, 0, len(it.cur)+len(p)), it.cur...), p...)
}

// next is recIter.next on the stream; a record cut off by the stream's end
// where the writer last flushed (a torn tail) is an end, not an error.
func (it *streamIter) next() (typ byte, body []byte, ok bool) {
	if it.err != nil || it.ch == nil {
		return 0, nil, false
	}
	for {
		n, k := binary.Uvarint(it.cur)
		if k < 0 {
			it.err = errors.New("a record length that overflows")
			return 0, nil, false
		}
		if k > 0 {
			if n == 0 || n > maxRecord {
				it.err = fmt.Errorf("a record of %d bytes (a record holds 1 byte to %s)", n, sizeWords(maxRecord))
				return 0, nil, false
			}
			if uint64(len(it.cur)-k) >= n {
				rec := it.cur[k : k+int(n)]
				it.cur = it.cur[k+int(n):]
				return rec[0], rec[1:], true
			}
		}
		if it.pending != nil && len(it.cur) == 0 {
			it.cur, it.pending = it.pending, nil
			continue
		}
		if it.pending != nil {
			// What is left of the joined record's buffer is a record cut
			// short (the join copies exactly one record): the rest of the
			// piece follows it.
			p := it.pending
			it.pending = nil
			it.cur = it.join(p)
			continue
		}
		p, more := <-it.ch
		if !more {
			it.err = it.perr
			return 0, nil, false
		}
		if len(it.cur) > 0 {
			p = it.join(p)
		}
		it.cur = p
	}
}
