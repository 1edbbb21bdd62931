package untrusted

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// Writer passes everything written to it through Lines before it reaches
// w: what fgtop prints as plain text (reports, JSON, errors on stderr)
// can then carry no escape sequence, whatever a value in it held. JSON
// that encoding/json wrote stays valid and means the same. A character
// split across two writes is held back until it is complete.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	part []byte // an incomplete UTF-8 sequence that ended the last write
	// on and off mark fgtop's own red (Red): random per writer, so no
	// outside text can hold them; "" while red is not allowed.
	on, off string
}

// AllowRed lets Red colour text: for a writer whose destination is a
// terminal that wants colour. The only escape sequences written are
// fgtop's own red and reset, where Red put them.
func (x *Writer) AllowRed() {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	tag := hex.EncodeToString(b)
	x.mu.Lock()
	x.on, x.off = "{red:"+tag+"}", "{end:"+tag+"}"
	x.mu.Unlock()
}

// Red returns s marked to be written in red, or s itself when AllowRed was
// not called. s is still escaped as any other text.
func (x *Writer) Red(s string) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.on == "" {
		return s
	}
	return x.on + s + x.off
}

// painted escapes s and turns Red's marks into the colour's sequences.
func (x *Writer) painted(s string) string {
	var b strings.Builder
	for s != "" {
		i, j := strings.Index(s, x.on), strings.Index(s, x.off)
		at, mark, sgr := i, x.on, "\x1b[31m"
		if at < 0 || (j >= 0 && j < at) {
			at, mark, sgr = j, x.off, "\x1b[0m"
		}
		if at < 0 {
			b.WriteString(Lines(s))
			break
		}
		b.WriteString(Lines(s[:at]))
		b.WriteString(sgr)
		s = s[at+len(mark):]
	}
	return b.String()
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it. It reports len(p) on success, as the
// bytes were all consumed.
func (x *Writer) Write(p []byte) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	buf := p
	if len(x.part) > 0 {
		buf = append(x.part, p...)
		x.part = nil
	}
	// Hold back an incomplete but possibly valid sequence at the end.
	if cut := incompleteTail(buf); cut < len(buf) {
		x.part = append([]byte(nil), buf[cut:]...)
		buf = buf[:cut]
	}
	if len(buf) == 0 {
		return len(p), nil
	}
	// The common case, nothing to escape, is written as it came, without
	// a copy: a follow stream writes megabytes a line.
	s := unsafe.String(unsafe.SliceData(buf), len(buf))
	if x.on != "" && (strings.Contains(s, x.on) || strings.Contains(s, x.off)) {
		if _, err := io.WriteString(x.w, x.painted(s)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if firstUnsafe(s, true) < 0 {
		if _, err := x.w.Write(buf); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if _, err := io.WriteString(x.w, Lines(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held-back incomplete sequence (escaped, as it will not
// be completed).
func (x *Writer) Flush() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.part) == 0 {
		return nil
	}
	s := string(x.part)
	x.part = nil
	_, err := io.WriteString(x.w, Lines(s))
	return err
}

// incompleteTail returns where a trailing incomplete UTF-8 sequence
// starts (len(b) when there is none).
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		c := b[i]
		if c < 0x80 {
			return len(b)
		}
		if c >= 0xc0 { // a leading byte
			if !utf8.FullRune(b[i:]) {
				return i
			}
			return len(b)
		}
	}
	return len(b)
}
