package resourcefile

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Mount is one entry of the MOUNTS line, as Backend.AI's Mount.from_str
// reads it. Source and Target are normalised the way Python's PosixPath
// prints them ("//" kept, "." segments, repeated and trailing slashes
// dropped), which is also how the agent writes them back.
type Mount struct {
	Type       string // MountBind (absolute source) or MountVolume (a bare name)
	Source     string
	Target     string
	Permission string // "ro", "rw" or "wd"
}

// String is the MOUNTS entry ("source:target:perm").
func (m Mount) String() string { return m.Source + ":" + m.Target + ":" + m.Permission }

// Mount types, as Backend.AI's MountTypes spells them.
const (
	MountBind   = "bind"
	MountVolume = "volume"
)

// scanMounts parses a MOUNTS value quickly when every entry is in the
// agent's own canonical form: normalised absolute paths or a bare volume
// name, and a valid permission. raw holds the same bytes as v. ok is false
// when any entry may not be; parseMount then reads the line the careful
// way, which also produces Python's error. Without keep it only checks
// validity, for which an absolute path needs no normalising.
func scanMounts(v string, raw []byte, out []Mount, keep bool) ([]Mount, bool) {
	// No '/' followed by '/' or '.' means no empty or "." segment and no
	// extra root slash; a '/' before ':' (a trailing slash) is checked per
	// field below. Hidden directories ("/home/work/.cache") and ".." take
	// the careful path.
	if keep && slashBeforeSlashOrDot(raw) {
		return nil, false
	}
	for v != "" {
		entry := v
		if i := strings.IndexByte(v, ','); i >= 0 {
			entry, v = v[:i], v[i+1:]
		} else {
			v = ""
		}
		if entry == "" {
			continue
		}
		c1 := strings.IndexByte(entry, ':')
		if c1 <= 0 || keep && entry[c1-1] == '/' && c1 > 1 {
			return nil, false
		}
		c2 := strings.IndexByte(entry[c1+1:], ':') + c1 + 1
		if c2 <= c1+2 || keep && entry[c2-1] == '/' || len(entry)-c2 != 3 || entry[c1+1] != '/' {
			return nil, false
		}
		m := Mount{Type: MountBind, Source: entry[:c1], Target: entry[c1+1 : c2]}
		if m.Source[0] != '/' {
			// A volume is one relative segment; "." is not one.
			if m.Source == "." || strings.IndexByte(m.Source, '/') >= 0 {
				return nil, false
			}
			m.Type = MountVolume
		}
		switch entry[c2+1:] {
		case "ro":
			m.Permission = "ro"
		case "rw":
			m.Permission = "rw"
		case "wd":
			m.Permission = "wd"
		default:
			return nil, false
		}
		if keep {
			out = append(out, m)
		}
	}
	return out, true
}

// slashBeforeSlashOrDot reports whether some '/' in b is followed by '/'
// or '.'. It tests eight positions per step with word arithmetic: on a
// 2.4 KB MOUNTS line a byte loop, or a substring search for "//", costs
// several times more.
func slashBeforeSlashOrDot(b []byte) bool {
	const ones, lo7 = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f
	const slashes = ones * '/'
	i := 0
	for ; i+9 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// Byte k of y is byte k+1 of b; '.' | 1 == '/'. A byte of w is
		// zero exactly where b[k] == '/' and b[k+1] is '/' or '.'.
		y := binary.LittleEndian.Uint64(b[i+1:]) | ones
		w := x ^ slashes | y ^ slashes
		// The top bit of each zero byte of w, without carries between
		// bytes.
		if ^((w&lo7 + lo7) | w | lo7) != 0 {
			return true
		}
	}
	for ; i+1 < len(b); i++ {
		if b[i] == '/' && b[i+1]|1 == '/' {
			return true
		}
	}
	return false
}

// parseMount is Mount.from_str. On failure it returns why, in fgtop's
// words, where Python raises ValueError.
func parseMount(s string) (Mount, string) {
	c1 := strings.IndexByte(s, ':')
	c2 := -1
	if c1 >= 0 {
		if c2 = strings.IndexByte(s[c1+1:], ':'); c2 >= 0 {
			c2 += c1 + 1
		}
	}
	if c2 < 0 {
		return Mount{}, fmt.Sprintf("want SOURCE:TARGET:PERMISSION, found %d part(s)", strings.Count(s, ":")+1)
	}
	perm := s[c2+1:]
	if strings.IndexByte(perm, ':') >= 0 {
		return Mount{}, "want SOURCE:TARGET:PERMISSION, found more than 3 parts"
	}
	m := Mount{Type: MountBind}
	source, abs, parts := posixPath(s[:c1])
	if !abs {
		if parts != 1 {
			return Mount{}, fmt.Sprintf("source %q must be an absolute path or a volume name", source)
		}
		m.Type = MountVolume
	}
	m.Source = source
	target, abs, _ := posixPath(s[c1+1 : c2])
	if !abs {
		return Mount{}, fmt.Sprintf("target %q must be an absolute path", target)
	}
	m.Target = target
	switch perm {
	case "ro":
		m.Permission = "ro"
	case "rw":
		m.Permission = "rw"
	case "wd":
		m.Permission = "wd"
	default:
		return Mount{}, fmt.Sprintf("permission %q is not ro, rw or wd", perm)
	}
	return m, ""
}

// posixPath is str(PurePosixPath(p)) (Python 3.11) with is_absolute() and,
// for a relative path, len(parts): exactly two leading slashes are kept,
// more collapse to one; empty and "." segments are dropped; an empty
// result prints as ".". Already-normal paths, the usual case, are
// returned as they are.
func posixPath(p string) (norm string, abs bool, parts int) {
	if slashes, ok := cleanPath(p); ok {
		if p[0] == '/' {
			return p, true, slashes
		}
		return p, false, slashes + 1
	}
	root := ""
	rest := p
	if strings.HasPrefix(p, "/") {
		rest = strings.TrimLeft(p, "/")
		root = "/"
		if len(p)-len(rest) == 2 {
			root = "//"
		}
	}
	var b strings.Builder
	b.WriteString(root)
	if root != "" {
		parts++
	}
	for seg := range strings.SplitSeq(rest, "/") {
		if seg == "" || seg == "." {
			continue
		}
		if b.Len() > len(root) {
			b.WriteByte('/')
		}
		b.WriteString(seg)
		parts++
	}
	if b.Len() == 0 {
		return ".", false, 0
	}
	return b.String(), root != "", parts
}

// cleanPath reports whether PurePosixPath would print p unchanged, and
// counts the slashes after the root (a relative path's segments, less
// one).
func cleanPath(p string) (slashes int, ok bool) {
	n := len(p)
	if n == 0 {
		return 0, false
	}
	start := 0
	if p[0] == '/' {
		start = 1
		if n > 1 && p[1] == '/' {
			start = 2
			if n > 2 && p[2] == '/' {
				return 0, false
			}
		}
		if n == start {
			return 0, true
		}
	}
	seg := start
	for i := start; i < n; i++ {
		if p[i] != '/' {
			continue
		}
		if i == seg || i == seg+1 && p[seg] == '.' {
			return 0, false
		}
		slashes++
		seg = i + 1
	}
	if seg == n || seg == n-1 && p[seg] == '.' {
		return 0, false
	}
	return slashes, true
}

// pyRepr approximates Python's repr() of a str, for messages only.
func pyRepr(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
