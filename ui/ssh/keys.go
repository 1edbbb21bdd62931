package sshserve

import (
	"bytes"
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/safefile"
)

// MinRSABits is the smallest RSA key accepted, as OpenSSH 9's
// RequiredRSASize and NIST: shorter keys are skipped, with a warning.
const MinRSABits = 2048

// RoleEnv is the environment option of an authorized_keys line that gives
// its key a role: environment="FGTOP_ROLE=operator". Keys without it are
// viewers.
const RoleEnv = "FGTOP_ROLE"

// Key is one authorized key.
type Key struct {
	// Fingerprint is OpenSSH's SHA256 fingerprint ("SHA256:...").
	Fingerprint string
	// Comment is the line's comment, usually who the key belongs to.
	Comment string
	// Role is agentconfig.RoleOperator or agentconfig.RoleViewer.
	Role agentconfig.Role
	// Line is the line of the file the key is on (1-based).
	Line int
}

// KeySet is the parsed content of one authorized_keys file. It is never
// changed after parsing: a reload makes a new one.
type KeySet struct {
	byWire map[string]Key // key: the key's wire form (PublicKey.Marshal)
}

// harmlessOptions are authorized_keys options that restrict what fgtop
// serve never offers anyway (forwarding, user rc files), so a key carrying
// them is accepted as is. Any other option (from=, command=, no-pty,
// expiry-time=, ...) would restrict the key in a way this server does not
// enforce: such a key is skipped rather than accepted with fewer
// restrictions than its owner wrote.
var harmlessOptions = map[string]bool{
	"restrict": true, "no-port-forwarding": true, "no-agent-forwarding": true,
	"no-x11-forwarding": true, "no-user-rc": true,
}

// ParseAuthorizedKeys reads an authorized_keys file's content. Lines it
// cannot use are skipped, each with a warning naming the line; a bad line
// never hides the good ones.
func ParseAuthorizedKeys(data []byte) (*KeySet, []string) {
	ks := &KeySet{byWire: map[string]Key{}}
	var warns []string
	for i, raw := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		line := bytes.TrimSpace(raw)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		pub, comment, opts, rest, err := gossh.ParseAuthorizedKey(line)
		if err != nil || len(bytes.TrimSpace(rest)) != 0 {
			warns = append(warns, fmt.Sprintf("line %d: not an OpenSSH public key: skipped", n))
			continue
		}
		if bits, weak := weakRSA(pub); weak {
			warns = append(warns, fmt.Sprintf("line %d: RSA key %s has %d bits, fewer than %d: skipped (use an ed25519 key, or RSA of %d bits or more)",
				n, gossh.FingerprintSHA256(pub), bits, MinRSABits, MinRSABits))
			continue
		}
		role, ok, w := roleOf(opts)
		if w != "" {
			warns = append(warns, fmt.Sprintf("line %d: %s", n, w))
		}
		if !ok {
			continue
		}
		wire := string(pub.Marshal())
		fp := gossh.FingerprintSHA256(pub)
		if prev, dup := ks.byWire[wire]; dup {
			// OpenSSH uses the first line that matches; so do we.
			warns = append(warns, fmt.Sprintf("line %d: key %s repeats line %d: this line is ignored", n, fp, prev.Line))
			continue
		}
		ks.byWire[wire] = Key{Fingerprint: fp, Comment: comment, Role: role, Line: n}
	}
	return ks, warns
}

// weakRSA reports an RSA key shorter than MinRSABits, and its size.
func weakRSA(pub gossh.PublicKey) (int, bool) {
	if pub.Type() != gossh.KeyAlgoRSA {
		return 0, false
	}
	cp, ok := pub.(gossh.CryptoPublicKey)
	if !ok {
		return 0, false
	}
	k, ok := cp.CryptoPublicKey().(*rsa.PublicKey)
	if !ok {
		return 0, false
	}
	bits := k.N.BitLen()
	return bits, bits < MinRSABits
}

// roleOf reads the options of one line: the role, whether the key may be
// used at all, and a warning ("" for none).
func roleOf(opts []string) (agentconfig.Role, bool, string) {
	var roles []string
	for _, o := range opts {
		name, val, hasVal := strings.Cut(o, "=")
		name = strings.ToLower(name)
		switch {
		case name == "environment" && hasVal:
			env := strings.Trim(val, `"`)
			if k, v, _ := strings.Cut(env, "="); k == RoleEnv {
				roles = append(roles, v)
			}
		case harmlessOptions[name]:
		default:
			return "", false, fmt.Sprintf("option %q is not enforced by fgtop serve: key skipped", name)
		}
	}
	switch {
	case len(roles) == 0:
		return agentconfig.RoleViewer, true, ""
	case len(roles) > 1:
		// Conflicting or repeated: grant the least, and say so.
		for _, r := range roles {
			if r != string(agentconfig.RoleOperator) {
				return agentconfig.RoleViewer, true, fmt.Sprintf("%s given %d times: key is a viewer", RoleEnv, len(roles))
			}
		}
		return agentconfig.RoleOperator, true, ""
	case roles[0] == string(agentconfig.RoleOperator):
		return agentconfig.RoleOperator, true, ""
	case roles[0] == string(agentconfig.RoleViewer):
		return agentconfig.RoleViewer, true, ""
	default:
		return agentconfig.RoleViewer, true, fmt.Sprintf("%s=%q is not a role (operator or viewer): key is a viewer", RoleEnv, roles[0])
	}
}

// LoadAuthorizedKeys reads (ReadAuthorizedKeys) and parses an
// authorized_keys file.
func LoadAuthorizedKeys(path string) (*KeySet, []string, error) {
	data, err := ReadAuthorizedKeys(path)
	if err != nil {
		return nil, nil, err
	}
	ks, warns := ParseAuthorizedKeys(data)
	return ks, warns, nil
}

// MaxKeysFileSize is the largest authorized_keys file read: thousands of
// keys.
const MaxKeysFileSize = 4 << 20

// ErrInsecureKeys is wrapped when authorized_keys, or a directory above
// it, may be changed by someone other than its owner and root.
var ErrInsecureKeys = errors.New("authorized keys: unsafe permissions")

// ReadAuthorizedKeys reads an authorized_keys file as sshd's StrictModes
// does: refused when the file or a directory above it is writable by
// group or others (a world-writable directory with the sticky bit, such as
// /tmp, is allowed: only an entry's owner may replace the entry), or is
// owned by someone other than root and the server's user; and only a
// regular file of at most MaxKeysFileSize bytes, opened without blocking.
func ReadAuthorizedKeys(path string) ([]byte, error) {
	if err := checkKeysPath(path); err != nil {
		return nil, err
	}
	data, err := safefile.ReadFile(path, MaxKeysFileSize)
	if err != nil {
		return nil, fmt.Errorf("authorized keys: %w", err)
	}
	return data, nil
}

// checkKeysPath checks the modes and owners of path and of every
// directory above it.
func checkKeysPath(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("authorized keys: %w", err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("authorized keys: %w", err)
	}
	if err := checkOwnerMode(abs, st, false); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("authorized keys: %w", err)
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		dst, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("authorized keys: %w", err)
		}
		if err := checkOwnerMode(dir, dst, true); err != nil {
			return err
		}
		if parent := filepath.Dir(dir); parent == dir {
			return nil
		}
	}
}

func checkOwnerMode(path string, st os.FileInfo, isDir bool) error {
	perm := st.Mode().Perm()
	if perm&0o022 != 0 && !(isDir && st.Mode()&os.ModeSticky != 0) {
		what := "the file"
		if isDir {
			what = "its directory " + path
		}
		return fmt.Errorf("%w: %s is writable by group or others (mode %04o): chmod go-w %s", ErrInsecureKeys, what, perm, path)
	}
	if uid, ok := ownerOf(st); ok && uid != 0 && uid != os.Geteuid() {
		return fmt.Errorf("%w: %s is owned by uid %d, neither root nor this server's user", ErrInsecureKeys, path, uid)
	}
	return nil
}

// Lookup returns the entry of a key, if the set holds it.
func (ks *KeySet) Lookup(pub gossh.PublicKey) (Key, bool) {
	if ks == nil || pub == nil {
		return Key{}, false
	}
	k, ok := ks.byWire[string(pub.Marshal())]
	return k, ok
}

// Counts returns how many operator and viewer keys the set holds.
func (ks *KeySet) Counts() (operators, viewers int) {
	if ks == nil {
		return 0, 0
	}
	for _, k := range ks.byWire {
		if k.Role == agentconfig.RoleOperator {
			operators++
		} else {
			viewers++
		}
	}
	return operators, viewers
}

// NoKeysWarning is what to say when the authorized_keys file at path
// holds no key fgtop accepts (empty, or every line skipped), "" when it
// holds one or cannot be read now (the server read it a moment ago; its
// log says what changed). The server then refuses every login, and with
// --log the lines saying why went into the log file, so the terminal
// showed "listening" and nothing else while every client read
// "Permission denied". A warning, not an error: the file is re-read when
// it changes, so keys may be added later.
func NoKeysWarning(path string) string {
	ks, warns, err := LoadAuthorizedKeys(path)
	if err != nil {
		return ""
	}
	if ops, viewers := ks.Counts(); ops+viewers > 0 {
		return ""
	}
	why := "it holds no key line"
	if len(warns) > 0 {
		why = warns[0]
		if len(warns) > 1 {
			why += fmt.Sprintf("; %d more in the log", len(warns)-1)
		}
	}
	return fmt.Sprintf("--authorized-keys %s holds no key fgtop accepts (%s): every login is refused until one is added", path, why)
}
