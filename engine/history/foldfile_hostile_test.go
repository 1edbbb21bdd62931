package history

import (
	"encoding/binary"
	"hash/crc32"
	"runtime"
	"testing"
	"time"
)

// TestHostileFoldBounded: a fold file of a few KiB whose body
// decompresses to zeros under its counts (a string table of millions, an
// allocation of an entry per two bytes left) is refused within a bound of
// memory and time, not after making room for all it claims (found by
// review: 1.3-1.5 GiB and up to 18 s before each was refused).
func TestHostileFoldBounded(t *testing.T) {
	seg := []byte("a segment")
	const L = maxFold - 8192
	cases := map[string][]byte{}
	// A string is two bytes at least: the count passes the check of the
	// bytes left.
	cases["string table"] = append(binary.AppendUvarint(nil, L/2), make([]byte, L)...)
	{
		e := &foldEnc{strs: map[string]uint64{}}
		e.tm(time.Time{})
		e.uv(0)           // flags
		e.tm(time.Time{}) // rotateAt
		e.tm(time.Time{}) // last
		e.uv(0)           // journal
		e.uv(1)           // one entry
		e.uv(feInCk | fePresent)
		e.str("k") // id
		e.str("")  // state
		e.who(identity{}, true)
		e.uv(0)     // fa.n
		e.uv(L / 2) // fa entries
		te := &enc{b: binary.AppendUvarint(nil, uint64(len(e.tab)))}
		for _, s := range e.tab {
			te.id(s)
		}
		b := append(te.b, e.b...)
		cases["allocation"] = append(b, make([]byte, L)...)
	}
	for name, body := range cases {
		file := frameFold(body, seg)
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		t0 := time.Now()
		_, err := parseFold(file, int64(len(seg)), crc32.Checksum(seg, castagnoli), time.Unix(1e9, 0))
		el := time.Since(t0)
		runtime.ReadMemStats(&m1)
		alloc := (m1.TotalAlloc - m0.TotalAlloc) >> 20
		t.Logf("%s: file %d bytes, %d MiB allocated in %v: %v", name, len(file), alloc, el.Round(time.Millisecond), err)
		if err == nil {
			t.Errorf("%s: taken", name)
		}
		// The body itself is up to maxFold; room for what it claims is not.
		if alloc > 2*(maxFold>>20) || el > 5*time.Second {
			t.Errorf("%s: a %d-byte fold file cost %d MiB and %v before it was refused", name, len(file), alloc, el)
		}
	}
}
