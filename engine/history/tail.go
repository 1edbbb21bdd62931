package history

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/fgtop/fgtop/internal/safefile"
)

// A segment's tail file holds the records written since the segment's
// last compressed chunk, uncompressed: compressing each second's changes
// on their own (a zstd block flushed per write) cost a node with one
// change a second more CPU than the records themselves. The recorder
// appends each second's records to the tail as one frame (one write(2)),
// and once the tail holds tailMax bytes it compresses them into the
// segment as one delta chunk and starts the tail afresh.
//
// The tail names the byte offset of the segment it continues: the
// segment's size when the tail was started. A reader applies the tail
// only where the segment's intact chunks end at that offset, so a tail
// whose records the recorder had compressed into the segment before it
// was killed (the segment is longer) is ignored, and one whose compressed
// chunk was cut short (the segment ends, damaged, at the offset) stands
// in for that chunk.
const (
	tailMagic     = "FGTOPTAL"
	tailSuffix    = ".fgt"
	tailHeadSize  = 28 // magic, version (uint32 LE), reserved (uint32), segment offset (uint64 LE), CRC-32C of the 24 bytes before
	tailFrameHead = 8  // length (uint32 LE), CRC-32C (uint32 LE) of the length and the records
	// tailMax is how many bytes of records the tail holds before they
	// are compressed into the segment: about forty minutes of the
	// engine benchmark's node at one change a second, a few seconds of a
	// busy node. A compression starts with the compressor's tables cold
	// (~0.4 ms on the shared VM whatever its size), so few large ones cost
	// less per change than many small ones; the reader reads the tail
	// whole, which at 1 MiB costs it well under a millisecond.
	tailMax = 1 << 20
	// maxTail bounds what a reader reads of a tail file (a tail holds
	// tailMax bytes and one second's records at most).
	maxTail = 2 * maxChunk
)

// tailPath is the tail file of the segment at segPath.
func tailPath(segPath string) string {
	return strings.TrimSuffix(segPath, segSuffix) + tailSuffix
}

// tailHeader is the head of a tail that continues its segment at byte
// segOff.
func tailHeader(segOff int64) []byte {
	h := make([]byte, tailHeadSize)
	copy(h, tailMagic)
	binary.LittleEndian.PutUint32(h[8:], Version)
	binary.LittleEndian.PutUint64(h[16:], uint64(segOff))
	binary.LittleEndian.PutUint32(h[24:], crc32.Checksum(h[:24], castagnoli))
	return h
}

// appendTailFrame appends one frame holding recs (whole records).
func appendTailFrame(dst, recs []byte) []byte {
	var h [tailFrameHead]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(len(recs)))
	c := crc32.Update(crc32.Checksum(h[:4], castagnoli), castagnoli, recs)
	binary.LittleEndian.PutUint32(h[4:], c)
	return append(append(dst, h[:]...), recs...)
}

// tailData is what could be read of a tail file.
type tailData struct {
	// SegOffset: the byte of the segment the records continue from.
	SegOffset int64
	// Recs are the records of the intact frames, in order.
	Recs []byte
	// Damage says why reading stopped before the end ("" when it did
	// not), Offset where; Torn: the last frame is cut short or does not
	// match, as a crash or a full disk leaves it.
	Damage string
	Offset int64
	Torn   bool
	// Unusable, when set, says why the file is no tail that can be read
	// at all (readTail); nothing else is then set.
	Unusable string
}

// parseTail reads a tail file's bytes. An error means the file is no
// tail this fgtop can use (its head is cut short, damaged, or of another
// version): the segment then ends where its chunks do.
func parseTail(b []byte) (*tailData, error) {
	if len(b) < tailHeadSize || string(b[:8]) != tailMagic {
		return nil, errors.New("not an fgtop history tail")
	}
	if crc32.Checksum(b[:24], castagnoli) != binary.LittleEndian.Uint32(b[24:]) {
		return nil, errors.New("a tail whose head does not match its checksum")
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != Version {
		// Only version 3 has tails; a newer one may mean anything.
		return nil, fmt.Errorf("a tail of format version %d, this fgtop reads version %d", v, Version)
	}
	off := binary.LittleEndian.Uint64(b[16:])
	if off > 1<<62 {
		return nil, fmt.Errorf("a tail continuing at byte %d", off)
	}
	td := &tailData{SegOffset: int64(off)}
	at := tailHeadSize
	for at < len(b) {
		rest := b[at:]
		if len(rest) < tailFrameHead {
			td.Damage, td.Offset, td.Torn = "a frame header cut short", int64(at), true
			break
		}
		n := binary.LittleEndian.Uint32(rest)
		if n == 0 || n > maxChunk {
			td.Damage, td.Offset = fmt.Sprintf("a frame of %d bytes (a frame holds 1 byte to %s)", n, sizeWords(maxChunk)), int64(at)
			break
		}
		if uint64(len(rest)-tailFrameHead) < uint64(n) {
			td.Damage, td.Offset, td.Torn = "the last frame cut short", int64(at), true
			break
		}
		recs := rest[tailFrameHead : tailFrameHead+int(n)]
		if crc32.Update(crc32.Checksum(rest[:4], castagnoli), castagnoli, recs) != binary.LittleEndian.Uint32(rest[4:]) {
			td.Damage, td.Offset = "a frame whose checksum does not match", int64(at)
			td.Torn = at+tailFrameHead+int(n) == len(b)
			break
		}
		td.Recs = append(td.Recs, recs...)
		at += tailFrameHead + int(n)
	}
	return td, nil
}

// readTail reads the tail file of the segment at segPath; nil when there
// is none (the segment was closed, or written before version 3) or it
// holds no more than a recorder leaves while starting one (nothing, or a
// head cut short: Truncate and the head's write, or a crash between). A
// tail that is there but cannot be used (its head damaged or of another
// version, too large, not a regular file, not readable by this user) is
// a tailData with only Unusable set: whatever records it held are lost,
// and the reader says so rather than blame the gap on a killed recorder.
// As a segment is (bounds.go): a regular file only, its head checked
// before anything else is read, its size against maxTail, each frame's
// length before its records.
func readTail(segPath string) *tailData {
	f, st, err := openRegular(tailPath(segPath))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return unusableTail(err)
	}
	defer f.Close()
	if st.Size() > maxTail {
		return &tailData{Unusable: fmt.Sprintf("a tail of %s, more than a tail holds (%s)", sizeWords(st.Size()), sizeWords(maxTail))}
	}
	b, err := readMore(f, make([]byte, 0, min(st.Size()+1, 2*tailMax)), tailHeadSize)
	if err != nil {
		// Only the file's end may be a tail being started; a read that
		// failed (EIO) is a tail that cannot be used, whatever it gave.
		if endOK(err) == nil && startingTail(b) {
			return nil
		}
		return unusableTail(err)
	}
	if _, err := parseTail(b); err != nil {
		return &tailData{Unusable: err.Error()}
	}
	// Buffered: a tail holds a frame for each second's writes.
	r := bufio.NewReaderSize(f, 64<<10)
	for len(b) <= maxTail {
		if b, err = readMore(r, b, tailFrameHead); err != nil {
			break
		}
		n := binary.LittleEndian.Uint32(b[len(b)-tailFrameHead:])
		if n == 0 || n > maxChunk || len(b)+int(n) > maxTail {
			break
		}
		if b, err = readMore(r, b, int(n)); err != nil {
			break
		}
	}
	if err := endOK(err); err != nil {
		return unusableTail(err)
	}
	if len(b) > maxTail {
		return &tailData{Unusable: fmt.Sprintf("a tail that grew past what a tail holds (%s) while read", sizeWords(maxTail))}
	}
	td, err := parseTail(b)
	if err != nil {
		return &tailData{Unusable: err.Error()}
	}
	return td
}

// startingTail reports whether b, all a tail file holds, is what a
// recorder leaves while it starts a tail: nothing, or the first bytes of
// a head (its magic so far).
func startingTail(b []byte) bool {
	if len(b) >= tailHeadSize {
		return false
	}
	n := min(len(b), len(tailMagic))
	return string(b[:n]) == tailMagic[:n]
}

// unusableTail words why a tail file could not be read.
func unusableTail(err error) *tailData {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return &tailData{Unusable: "a tail this user may not read"}
	case errors.Is(err, safefile.ErrNotRegular):
		return &tailData{Unusable: "a tail that is not a regular file"}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &tailData{Unusable: "not an fgtop history tail"}
	}
	return &tailData{Unusable: fmt.Sprintf("a tail that cannot be read (%v)", err)}
}

// attachTail adds a tail's records to a segment's, when the tail
// continues the segment where its intact chunks end. A delta stream read
// at once gets the records appended; one left compressed (lazy) gets them
// in Tail, for the walker to read after the stream.
func attachTail(sd *segData, td *tailData, segPath string) {
	if sd == nil || td == nil || sd.Checkpoint == nil || sd.deltaBad {
		return
	}
	if td.Unusable != "" {
		// Which byte of the segment it continued is not known: said
		// whether or not its records were compressed into the segment
		// before (the segment's own damage, if any, is said first).
		if sd.Damage == "" {
			sd.Damage, sd.Offset, sd.Torn = fmt.Sprintf("tail %s: %s", tailName(segPath), td.Unusable), sd.End, false
			sd.tailLost = true
		}
		return
	}
	if td.SegOffset != sd.End {
		return
	}
	if sd.Damage != "" {
		// The chunk at the end, cut short or damaged: the tail holds its
		// records (the recorder empties the tail only once the chunk is
		// written whole).
		sd.Damage, sd.Offset, sd.Torn = "", 0, false
	}
	if td.Damage != "" {
		sd.Damage, sd.Offset, sd.Torn = fmt.Sprintf("tail %s: %s", tailName(segPath), td.Damage), td.Offset, td.Torn
	}
	if len(td.Recs) == 0 {
		return
	}
	if sd.deltaZ != nil {
		sd.Tail = td.Recs
		return
	}
	sd.Deltas = append(sd.Deltas, td.Recs...)
}

func tailName(segPath string) string {
	p := tailPath(segPath)
	if i := strings.LastIndexByte(p, os.PathSeparator); i >= 0 {
		return p[i+1:]
	}
	return p
}
