package resourcefile

import (
	"fmt"
	"strings"
)

// Mount is one entry of the MOUNTS line, as Backend.AI's Mount.from_str
// reads it. Source and Target are normalised the way Python's PosixPath
// prints them ("//" kept, "." segments, repeated and trailing slashes
// dropped), which is also how the agent writes them back.
type Mount struct {
	Type       string // "bind" (absolute source) or "volume" (a bare name)
	Source     string
	Target     string
	Permission string // "ro", "rw" or "wd"
}

// String is the MOUNTS entry ("source:target:perm").
func (m Mount) String() string { return m.Source + ":" + m.Target + ":" + m.Permission }

// Mount types and permissions, as Backend.AI's enums spell them.
const (
	MountBind   = "bind"
	MountVolume = "volume"
)

// parseMount is Mount.from_str. On failure it returns the ValueError
// message Python would give.
func parseMount(s string) (Mount, string) {
	n := strings.Count(s, ":")
	if n < 2 {
		return Mount{}, fmt.Sprintf("not enough values to unpack (expected 3, got %d)", n+1)
	}
	if n > 2 {
		return Mount{}, "too many values to unpack (expected 3)"
	}
	src, rest, _ := strings.Cut(s, ":")
	tgt, perm, _ := strings.Cut(rest, ":")
	m := Mount{Type: MountBind}
	source, abs, parts := posixPath(src)
	if !abs {
		if parts != 1 {
			return Mount{}, fmt.Sprintf("('Mount source must be an absolute path if it is not a volume name.', PosixPath(%s))", pyRepr(source))
		}
		m.Type = MountVolume
	}
	m.Source = source
	target, abs, _ := posixPath(tgt)
	if !abs {
		return Mount{}, fmt.Sprintf("('Mount target must be an absolute path.', PosixPath(%s))", pyRepr(target))
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
		return Mount{}, fmt.Sprintf("%s is not a valid MountPermission", pyRepr(perm))
	}
	return m, ""
}

// posixPath is str(PurePosixPath(p)) (Python 3.11) with is_absolute() and
// len(parts): exactly two leading slashes are kept, more collapse to one;
// empty and "." segments are dropped; an empty result prints as ".".
// Already-normal paths are returned without copying.
func posixPath(p string) (norm string, abs bool, parts int) {
	root := ""
	rest := p
	if strings.HasPrefix(p, "/") {
		rest = strings.TrimLeft(p, "/")
		root = "/"
		if len(p)-len(rest) == 2 {
			root = "//"
		}
	}
	clean := len(p)-len(rest) <= 2
	for seg := range strings.SplitSeq(rest, "/") {
		if seg == "" || seg == "." {
			clean = false
			continue
		}
		parts++
	}
	if root != "" {
		parts++
	}
	if clean && rest != "" {
		return p, root != "", parts
	}
	if clean && root != "" {
		return root, true, parts
	}
	var b strings.Builder
	b.WriteString(root)
	first := true
	for seg := range strings.SplitSeq(rest, "/") {
		if seg == "" || seg == "." {
			continue
		}
		if !first {
			b.WriteByte('/')
		}
		b.WriteString(seg)
		first = false
	}
	if b.Len() == 0 {
		return ".", false, 0
	}
	return b.String(), root != "", parts
}

// pyRepr approximates Python's repr() of a str, for messages only.
func pyRepr(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
