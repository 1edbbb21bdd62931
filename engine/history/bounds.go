package history

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/internal/safefile"
)

// The files of a history directory are outside input: whoever may write
// the directory can plant a file named like a segment. Every byte count a
// file states is checked before it is trusted: the header first, then the
// file's size (maxSegmentFile, maxTail), each chunk's and frame's length
// (maxChunk) before its payload is read, and what each stream
// decompresses to (rawCap), stopped at the cap as it goes. Files are
// opened only when they are regular files, without following a link and
// without blocking (a FIFO named like a segment would hang the reader).

// errNotSegment: the file does not begin with a segment header.
var errNotSegment = errors.New("not an fgtop history segment")

// checkHeader refuses what does not begin with a segment header of a
// version this fgtop reads.
func checkHeader(b []byte) error {
	if len(b) < headerSize || string(b[:8]) != segMagic {
		return errNotSegment
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v < minVersion || v > Version {
		return fmt.Errorf("format version %d, this fgtop reads versions %d to %d", v, minVersion, Version)
	}
	return nil
}

// rawCap is the most one stream (the checkpoint, the deltas) of a
// segment of size bytes may decompress to.
func rawCap(size int64) int64 {
	return min(maxSegmentRaw, rawFloor+rawRatio*max(size, 0))
}

// capOf is the cap of the segment's streams, for what.
func (sd *segData) capOf(what string) *capError {
	return &capError{what: what, limit: sd.limit, size: sd.size}
}

// capError: a stream of a segment decompresses (or claims to) to more
// than the segment may hold.
type capError struct {
	what  string
	limit int64
	// size is the segment file's (0: not known); claim what a frame's
	// header says it holds (0: it went over as it was decompressed).
	size  int64
	claim uint64
}

func (e *capError) Error() string {
	of := "the cap for one stream of a segment"
	if e.size > 0 {
		of = fmt.Sprintf("the cap for one stream of a segment of %s (%s plus %d times its size, %s at most)",
			sizeWords(e.size), sizeWords(rawFloor), rawRatio, sizeWords(maxSegmentRaw))
	}
	if e.claim > 0 {
		return fmt.Sprintf("%s says it holds %s, more than %s, %s; fgtop writes no such record and read none of it",
			e.what, sizeWords(int64(min(e.claim, 1<<62))), sizeWords(e.limit), of)
	}
	return fmt.Sprintf("%s decompresses to more than %s, %s; fgtop writes no such record and read it only up to the cap",
		e.what, sizeWords(e.limit), of)
}

// streamDamage is a segData.Damage for a stream that failed to
// decompress: a cap says so in its own words.
func streamDamage(what string, err error) string {
	var ce *capError
	if errors.As(err, &ce) {
		return ce.Error()
	}
	return what + " that does not decompress: " + err.Error()
}

// capReader reads at most lim.limit bytes of r and then, where r has
// more, returns lim; once ctx is done it returns ctx's error.
type capReader struct {
	r   io.Reader
	n   int64
	ctx context.Context
	lim *capError
}

func newCapReader(ctx context.Context, r io.Reader, lim *capError) *capReader {
	if ctx == nil {
		ctx = context.Background()
	}
	return &capReader{r: r, n: lim.limit, ctx: ctx, lim: lim}
}

func (c *capReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if c.n <= 0 {
		// At the cap: one byte more says the stream goes on.
		var one [1]byte
		if _, err := io.ReadFull(c.r, one[:]); err != nil {
			return 0, err
		}
		return 0, c.lim
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	k, err := c.r.Read(p)
	c.n -= int64(k)
	return k, err
}

// openRegular opens a file of the record read-only: a regular file only,
// never through a symlink, never blocking (a FIFO is refused at once).
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := safefile.Open(path, true)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// readSegmentFile reads the segment file at path into buf's room: its
// header before anything else, then its size against maxSegmentFile,
// then chunk by chunk, each chunk's header before its payload. A file
// that stops making sense is read no further than the header that does
// not (parseSegment says what is wrong with it): a sparse file of zeros
// costs 25 bytes, not its size.
func readSegmentFile(path string, buf []byte) ([]byte, error) {
	f, st, err := openRegular(path)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			// Said of the segment, which the answer names: Go's "open
			// DIR/seg-…: permission denied" named it twice and said not
			// what to do.
			return nil, fmt.Errorf("this user may not read it (%w): run fgtop as the recorder's user, or as root", fs.ErrPermission)
		}
		return nil, err
	}
	defer f.Close()
	b := slices.Grow(buf[:0], headerSize)[:headerSize]
	if n, err := io.ReadFull(f, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w (%d bytes, shorter than its header)", errNotSegment, n)
		}
		return nil, err
	}
	if err := checkHeader(b); err != nil {
		return nil, err
	}
	if st.Size() > maxSegmentFile {
		return nil, fmt.Errorf("%s, more than the %s fgtop reads of one segment: not a segment fgtop wrote (move it out of the history directory)",
			sizeWords(st.Size()), sizeWords(maxSegmentFile))
	}
	// Room for the file as it says it is, up to a few MiB (a real
	// segment's size); beyond, the room doubles as chunks come, so a size
	// the file only claims costs nothing.
	b = slices.Grow(b, int(min(st.Size()+1, segRoom))-len(b))
	// Buffered from here: a segment of format 1 or 2 has a chunk a second.
	r := bufio.NewReaderSize(f, 64<<10)
	// A recorder may append meanwhile: read on to the end, within the cap.
	for len(b) < maxSegmentFile {
		b, err = readMore(r, b, chunkHead)
		if err != nil {
			return b, endOK(err)
		}
		h := b[len(b)-chunkHead:]
		n := binary.LittleEndian.Uint32(h[1:])
		if (h[0] != chunkCheckpoint && h[0] != chunkDelta) || n > maxChunk || int64(len(b))+int64(n) > maxSegmentFile {
			return b, nil
		}
		if b, err = readMore(r, b, int(n)); err != nil {
			return b, endOK(err)
		}
	}
	return b, nil
}

// segRoom is the room a segment's read starts with.
const segRoom = 8 << 20

// readMore appends up to n bytes of f to b, an error when fewer came. It
// reads a MiB at a time, doubling b's room as bytes come, so a length a
// file claims but does not hold costs nothing.
func readMore(f io.Reader, b []byte, n int) ([]byte, error) {
	for n > 0 {
		piece := min(n, 1<<20)
		if cap(b)-len(b) < piece {
			nb := make([]byte, len(b), max(2*cap(b), len(b)+piece))
			copy(nb, b)
			b = nb
		}
		k, err := io.ReadFull(f, b[len(b):len(b)+piece])
		b = b[:len(b)+k]
		if err != nil {
			return b, err
		}
		n -= piece
	}
	return b, nil
}

// endOK: the file's end, wherever it falls, is no error (what is cut
// short is the parser's to name).
func endOK(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}

// sizeWords is a byte count as fgtop says sizes: 98 KiB, 64 MiB, 6 GiB.
func sizeWords(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n)/unit, 0
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f %s", v, units[i])
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") + " " + units[i]
}
