package fleet

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fgtop/fgtop/internal/safefile"
)

// maxKnownHostsFile bounds a known_hosts file read: a line is about 100
// to 800 bytes, so 64 MiB holds the keys of far more hosts than any fleet
// has, and a path naming something huge is refused rather than read.
const maxKnownHostsFile = 64 << 20

// maxKnownHostsLine is the longest known_hosts line fgtop reads: the
// knownhosts package stops at the first line over 64 KiB (bufio.Scanner's
// limit) and takes the whole file with it; a real line, even an RSA key
// of 16,384 bits with a dozen names, is under 4 KiB.
const maxKnownHostsLine = 32 << 10

// maxSkippedNamed is how many skipped lines the warning names, so that a
// file of junk gives one short line.
const maxSkippedNamed = 5

// skippedLine is a known_hosts line fgtop leaves out, and why.
type skippedLine struct {
	Line int // 1-based, as ssh and the knownhosts package count
	Why  string
}

// filterKnownHosts returns data with every line the knownhosts package
// would refuse made empty (the others keep their numbers, so a changed
// key is reported at its line in the operator's file), and the lines it
// emptied. knownhosts.New refuses a whole file for one bad line, where
// OpenSSH skips it and uses the rest: one stray line in ~/.ssh/known_hosts
// stopped every fleet command.
func filterKnownHosts(data []byte) ([]byte, []skippedLine) {
	var out bytes.Buffer
	out.Grow(len(data) + 1)
	var skipped []skippedLine
	n := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		n++
		if why := knownHostsLineProblem(line); why != "" {
			skipped = append(skipped, skippedLine{Line: n, Why: why})
		} else {
			out.Write(line)
		}
		out.WriteByte('\n')
	}
	return out.Bytes(), skipped
}

// knownHostsLineProblem says why the knownhosts package would refuse one
// line (without its newline), in fgtop's words, or "" when it reads it.
// It follows knownhosts' own parser step by step (golang.org/x/crypto
// v0.58.0, knownhosts.go: Read, parseLine, newHostnameMatcher,
// newHashedHost); FuzzKnownHostsLine checks that both agree on every line.
func knownHostsLineProblem(raw []byte) string {
	if len(raw) > maxKnownHostsLine {
		return fmt.Sprintf("longer than %d bytes", maxKnownHostsLine)
	}
	line := bytes.TrimSuffix(raw, []byte{'\r'})
	line = bytes.Trim(line, " \t")
	if len(line) == 0 || line[0] == '#' {
		return ""
	}
	marker := ""
	if w, next := khNextWord(line); w == "@cert-authority" || w == "@revoked" {
		marker, line = w, next
	}
	host, line := khNextWord(line)
	if strings.HasPrefix(host, "@") {
		return "a marker ssh does not know"
	}
	if len(line) == 0 {
		return "no key type and key after the host names"
	}
	wantType, line := khNextWord(line)
	if len(line) == 0 {
		return "no key after the key type"
	}
	blob, _ := khNextWord(line)
	keyBytes, err := base64.StdEncoding.DecodeString(blob)
	if err != nil {
		return "the key is not base64"
	}
	key, err := gossh.ParsePublicKey(keyBytes)
	if err != nil {
		return "the key is not a public key fgtop knows"
	}
	if key.Type() != wantType {
		return "the key is not of the type the line names"
	}
	if marker == "@revoked" {
		return ""
	}
	if host[0] == '|' {
		return hashedHostProblem(host)
	}
	for _, p := range strings.Split(host, ",") {
		if p == "" {
			continue
		}
		p = strings.TrimPrefix(p, "!")
		if p == "" {
			return "a ! with no host name after it"
		}
		if p[0] == '[' {
			if _, _, err := net.SplitHostPort(p); err != nil {
				return "a [host]:port that is not one"
			}
		}
	}
	return ""
}

// hashedHostProblem checks a hashed host name (|1|SALT|HASH) as
// knownhosts does.
func hashedHostProblem(host string) string {
	parts := strings.Split(host, "|")
	if len(parts) != 4 {
		return "a hashed host name that is not |1|SALT|HASH"
	}
	if _, err := base64.StdEncoding.DecodeString(parts[2]); err != nil {
		return "a hashed host name whose salt is not base64"
	}
	if _, err := base64.StdEncoding.DecodeString(parts[3]); err != nil {
		return "a hashed host name whose hash is not base64"
	}
	if parts[1] != "1" {
		return "a hashed host name of a kind ssh does not write (not |1|)"
	}
	return ""
}

// khNextWord is knownhosts' nextWord: the text up to the first space or
// tab, and the rest with its spaces and tabs trimmed.
func khNextWord(line []byte) (string, []byte) {
	i := bytes.IndexAny(line, "\t ")
	if i == -1 {
		return string(line), nil
	}
	return string(line[:i]), bytes.Trim(line[i:], " \t")
}

// loadKnownHosts reads the known_hosts files (bounded, regular files
// only), leaves out the lines ssh could not read either, tells warn which
// (once per file), and returns the knownhosts callback over the rest,
// with the keys it reports named by the operator's file and line.
// knownhosts reads only named files, so the readable lines go through a
// private temporary copy, removed before this returns.
func loadKnownHosts(files []string, warn func(string)) (gossh.HostKeyCallback, error) {
	dir, err := os.MkdirTemp("", "fgtop-known-hosts-")
	if err != nil {
		return nil, fmt.Errorf("known_hosts: a temporary copy of its readable lines: %w", err)
	}
	defer os.RemoveAll(dir)
	orig := make(map[string]string, len(files))
	var copies []string
	for i, f := range files {
		data, err := safefile.ReadFile(f, maxKnownHostsFile)
		if err != nil {
			return nil, fmt.Errorf("known_hosts: %w", err)
		}
		kept, skipped := filterKnownHosts(data)
		if len(skipped) > 0 && warn != nil {
			warn(skippedWords(f, skipped))
		}
		c := filepath.Join(dir, fmt.Sprintf("%d", i))
		if err := os.WriteFile(c, kept, 0o600); err != nil {
			return nil, fmt.Errorf("known_hosts: a temporary copy of %s's readable lines: %w", f, err)
		}
		orig[c] = f
		copies = append(copies, c)
	}
	hk, err := knownhosts.New(copies...)
	if err != nil {
		// Not expected: every line knownhosts refuses was left out.
		return nil, fmt.Errorf("known_hosts (%s): %w", strings.Join(files, ", "), err)
	}
	return func(host string, remote net.Addr, key gossh.PublicKey) error {
		err := hk(host, remote, key)
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			named := &knownhosts.KeyError{Want: make([]knownhosts.KnownKey, len(ke.Want))}
			for i, w := range ke.Want {
				w.Filename = orig[w.Filename]
				named.Want[i] = w
			}
			return named
		}
		var re *knownhosts.RevokedError
		if errors.As(err, &re) {
			named := *re
			named.Revoked.Filename = orig[re.Revoked.Filename]
			return &named
		}
		return err //nolint:wrapcheck // hostKeyCheck words it
	}, nil
}

// skippedWords is the warning for a file's skipped lines.
func skippedWords(file string, skipped []skippedLine) string {
	var named []string
	for _, s := range skipped[:min(len(skipped), maxSkippedNamed)] {
		named = append(named, fmt.Sprintf("line %d (%s)", s.Line, s.Why))
	}
	if more := len(skipped) - len(named); more > 0 {
		named = append(named, fmt.Sprintf("and %d more", more))
	}
	lines := "lines that are"
	if len(skipped) == 1 {
		lines = "line that is"
	}
	return fmt.Sprintf("known_hosts %s: left out %d %s no host key (ssh skips them too): %s; host keys are checked against the file's other lines",
		file, len(skipped), lines, strings.Join(named, ", "))
}

// knownHostNames are the host names (not addresses, hashes or patterns)
// the known_hosts files list, each once, for a name that does not
// resolve to be told the closest; files that cannot be read give none.
func knownHostNames(files []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		data, err := safefile.ReadFile(f, maxKnownHostsFile)
		if err != nil {
			continue
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 || line[0] == '#' || line[0] == '@' || line[0] == '|' {
				continue
			}
			hosts, _ := khNextWord(line)
			for _, h := range strings.Split(hosts, ",") {
				if host, _, err := net.SplitHostPort(h); err == nil && strings.HasPrefix(h, "[") {
					h = host
				}
				if h == "" || strings.ContainsAny(h, "*?![]") || net.ParseIP(h) != nil || seen[h] {
					continue
				}
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	return out
}
