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
)

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

// LoadFile reads a theme file; see Load.
func LoadFile(path string) (*Theme, error) {
	b, err := os.ReadFile(path)
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
		return nil, err
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
		return err
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
