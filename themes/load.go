package themes

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/fgtop/fgtop/internal/safefile"
)

// MaxFileSize is the largest theme file read: a full theme is about 1 kB.
const MaxFileSize = 64 << 10

//go:embed files/*.toml
var files embed.FS

// Built-in theme names.
const (
	Dark         = "dark"
	Light        = "light"
	HighContrast = "high-contrast"
	Mono         = "mono"
	Colorblind   = "colorblind"
)

// ErrUnknown is wrapped when a theme name matches neither a user theme nor
// a built-in one.
var ErrUnknown = errors.New("unknown theme")

// Names returns the built-in theme names, sorted.
func Names() []string {
	ents, _ := fs.ReadDir(files, "files")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".toml"))
	}
	slices.Sort(out)
	return out
}

// Builtin returns a fresh copy of the named built-in theme.
func Builtin(name string) (*Theme, error) {
	b, err := files.ReadFile("files/" + name + ".toml")
	if err != nil || !validName(name) {
		return nil, fmt.Errorf("%w %q (built-in: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	var t Theme
	if err := decodeStrict(b, &t); err != nil {
		// The embedded files are tested; this is a build mistake.
		panic(fmt.Sprintf("themes: built-in %s: %v", name, err))
	}
	return &t, nil
}

// MustBuiltin is Builtin for names known at compile time.
func MustBuiltin(name string) *Theme {
	t, err := Builtin(name)
	if err != nil {
		panic(err)
	}
	return t
}

// Auto returns the built-in theme for a background: dark or light.
func Auto(darkBackground bool) *Theme {
	if darkBackground {
		return MustBuiltin(Dark)
	}
	return MustBuiltin(Light)
}

// NoColor reports whether the environment asks for no colour: NO_COLOR set
// to anything but the empty string (no-color.org). getenv is the program's
// environment, which over SSH is the session's, not the server's.
func NoColor(getenv func(string) string) bool {
	return getenv != nil && getenv("NO_COLOR") != ""
}

// Load returns the theme nameOrPath names:
//
//   - a path (it contains a path separator or ends in ".toml"): that file;
//   - a name: $XDG_CONFIG_HOME/fgtop/themes/NAME.toml (~/.config when
//     XDG_CONFIG_HOME is unset) when it exists, so a user may override a
//     built-in theme, otherwise the built-in theme of that name.
//
// A theme file may set only some keys: the rest come from the built-in
// theme named by its "inherit" key (default "dark"). Unknown keys and bad
// specs are errors that name the file and the key.
func Load(nameOrPath string) (*Theme, error) {
	if nameOrPath == "" {
		return nil, fmt.Errorf("%w: empty name", ErrUnknown)
	}
	if isPath(nameOrPath) {
		return LoadFile(nameOrPath)
	}
	if !validName(nameOrPath) {
		return nil, fmt.Errorf("%w %q: a name is letters, digits, '-' and '_'", ErrUnknown, nameOrPath)
	}
	if dir := UserDir(); dir != "" {
		p := filepath.Join(dir, nameOrPath+".toml")
		if _, err := os.Stat(p); err == nil {
			return LoadFile(p)
		}
	}
	return Builtin(nameOrPath)
}

// LoadNamed returns a theme by name only, for someone who may not name
// files (a viewer over SSH): NAME.toml from dir, a directory the server's
// owner chose ("" for none), when it is there, else the built-in theme
// NAME. A path, or anything but letters, digits, '-' and '_', is refused
// before any file is touched, so what the caller types can never make
// fgtop read a file outside dir; and an error says only what is wrong with
// the name, not what the server's file system holds.
func LoadNamed(name, dir string) (*Theme, error) {
	if !validName(name) {
		// The reason comes first: a narrow footer cuts the end.
		return nil, fmt.Errorf("%w: only a theme's name, not a path: %q (%s)", ErrUnknown, name, strings.Join(NamesIn(dir), ", "))
	}
	if dir != "" {
		p := filepath.Join(dir, name+".toml")
		b, err := safefile.ReadFile(p, MaxFileSize)
		switch {
		case err == nil:
			t, perr := Parse(b, name)
			if perr != nil {
				return nil, fmt.Errorf("theme %s: %w", name, perr)
			}
			return t, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("theme %s: cannot be read: %w", name, unpathed(err))
		}
	}
	if _, err := files.ReadFile("files/" + name + ".toml"); err != nil {
		return nil, fmt.Errorf("%w %q (%s)", ErrUnknown, name, strings.Join(NamesIn(dir), ", "))
	}
	return Builtin(name)
}

// NamesIn returns the names LoadNamed accepts: the built-in themes and
// those of dir ("" for none), sorted, without repeats.
func NamesIn(dir string) []string {
	out := Names()
	if dir != "" {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			n, ok := strings.CutSuffix(e.Name(), ".toml")
			if ok && validName(n) && e.Type().IsRegular() && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// unpathed is an error without the path it names: the kind of failure
// only.
func unpathed(err error) error {
	switch {
	case errors.Is(err, safefile.ErrNotRegular):
		return safefile.ErrNotRegular
	case errors.Is(err, safefile.ErrTooLarge):
		return safefile.ErrTooLarge
	case errors.Is(err, fs.ErrPermission):
		return fs.ErrPermission
	}
	return errors.New("read error")
}

// UserDir is where user themes live: $XDG_CONFIG_HOME/fgtop/themes, or
// ~/.config/fgtop/themes; "" when neither can be determined.
func UserDir() string {
	base := os.Getenv("XDG_CONFIG_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "fgtop", "themes")
}

// LoadFile reads a theme file; see Load. Only a regular file of at most
// MaxFileSize bytes is read (never a device or a FIFO), and no error quotes
// the file's content.
func LoadFile(path string) (*Theme, error) {
	b, err := safefile.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("theme: %w", err)
	}
	t, err := Parse(b, strings.TrimSuffix(filepath.Base(path), ".toml"))
	if err != nil {
		return nil, fmt.Errorf("theme %s: %w", path, err)
	}
	return t, nil
}

// Parse reads a theme from TOML, filling keys it does not set from the
// built-in theme its "inherit" key names (default "dark"). defaultName names
// the theme when the file has no "name".
func Parse(b []byte, defaultName string) (*Theme, error) {
	var head struct {
		Inherit string `toml:"inherit"`
	}
	// A first, lenient pass only to find the base theme.
	if _, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&head); err != nil {
		return nil, tomlError(err)
	}
	base := head.Inherit
	if base == "" {
		base = Dark
	}
	t, err := Builtin(base)
	if err != nil {
		return nil, fmt.Errorf("inherit: %w", err)
	}
	t.Name = ""
	file := struct {
		*Theme
		Inherit string `toml:"inherit"`
	}{Theme: t}
	if err := decodeStrict(b, &file); err != nil {
		return nil, err
	}
	if t.Name == "" {
		t.Name = defaultName
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// decodeStrict decodes TOML into v and refuses keys v has no field for, so
// a typo in a theme is reported rather than silently ignored.
func decodeStrict(b []byte, v any) error {
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(v)
	if err != nil {
		return tomlError(err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return fmt.Errorf("unknown key(s): %s", strings.Join(keys, ", "))
	}
	return nil
}

// tomlError reduces a TOML decode error to where it is: the decoder's own
// message quotes the text it found ('found "hunter2"'), and a theme path
// may name a file holding a secret.
func tomlError(err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("not valid TOML at line %d, column %d", pe.Position.Line, pe.Position.Col)
	}
	return errors.New("not a theme: a key has a value of the wrong type")
}

func isPath(s string) bool {
	return strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator) ||
		strings.HasSuffix(s, ".toml")
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		ok := r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}
