package sshserve

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"slices"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/engine/agentconfig"
)

// FuzzParseAuthorizedKeys feeds arbitrary authorized_keys files to the
// parser. The file is outside input (whoever manages the keys, an editor
// mid-write), and it decides who becomes an operator, so beyond not
// panicking the parser must: grant operator only to a line that asks for
// it and nothing else, never accept a key on a line with an option it does
// not enforce, decide each key from its own line only (the first of
// repeated lines), and name the line of every warning.
func FuzzParseAuthorizedKeys(f *testing.F) {
	keyLine := func(seed byte) string {
		priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
		pub, err := gossh.NewPublicKey(priv.Public())
		if err != nil {
			f.Fatal(err)
		}
		return strings.TrimSpace(string(gossh.MarshalAuthorizedKey(pub)))
	}
	a, b := keyLine(1), keyLine(2)
	for _, seed := range []string{
		"",
		"# only a comment\n\n",
		`environment="FGTOP_ROLE=operator" ` + a + " olga@ops\n" + b + " victor@watch\n",
		`restrict,environment="LANG=C",environment="FGTOP_ROLE=operator" ` + a + " o\n",
		`environment="FGTOP_ROLE=opertor" ` + a + "\n",
		`environment="FGTOP_ROLE=operator",environment="FGTOP_ROLE=viewer" ` + a + "\n",
		`from="10.0.0.0/8" ` + a + "\n" + b + "\n",
		"ssh-ed25519 not-base64 x\n" + b + "\n",
		b + " v\n" + `environment="FGTOP_ROLE=operator" ` + b + " v2\n",
		`command="/bin/sh",environment="FGTOP_ROLE=operator" ` + a + "\r\n",
		`environment="FGTOP_ROLE=operator x" ` + a + " trailing junk\n",
		`ENVIRONMENT="FGTOP_ROLE=operator",No-Pty ` + a + "\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, warns := ParseAuthorizedKeys(data)
		again, warns2 := ParseAuthorizedKeys(data)
		if !slices.Equal(warns, warns2) || len(again.byWire) != len(ks.byWire) {
			t.Fatal("two parses of the same file differ")
		}
		lines := bytes.Split(data, []byte("\n"))
		for _, w := range warns {
			var n int
			if _, err := fmt.Sscanf(w, "line %d:", &n); err != nil || n < 1 || n > len(lines) {
				t.Fatalf("warning %q names no line of the file", w)
			}
		}
		ops, viewers := ks.Counts()
		if ops+viewers != len(ks.byWire) {
			t.Fatalf("counts %d+%d, %d keys", ops, viewers, len(ks.byWire))
		}
		for wire, k := range ks.byWire {
			if k.Line < 1 || k.Line > len(lines) {
				t.Fatalf("key on line %d of %d", k.Line, len(lines))
			}
			line := bytes.TrimSpace(lines[k.Line-1])
			pub, _, opts, _, err := gossh.ParseAuthorizedKey(line)
			if err != nil || string(pub.Marshal()) != wire || gossh.FingerprintSHA256(pub) != k.Fingerprint {
				t.Fatalf("line %d does not hold key %s: %v", k.Line, k.Fingerprint, err)
			}
			var asks []string
			for _, o := range opts {
				name, val, _ := strings.Cut(o, "=")
				name = strings.ToLower(name)
				if name != "environment" && !harmlessOptions[name] {
					t.Fatalf("key %s accepted with option %q it does not enforce", k.Fingerprint, o)
				}
				if name == "environment" {
					if env, v, _ := strings.Cut(strings.Trim(val, `"`), "="); env == RoleEnv {
						asks = append(asks, v)
					}
				}
			}
			switch k.Role {
			case agentconfig.RoleOperator:
				if len(asks) == 0 || slices.ContainsFunc(asks, func(r string) bool { return r != "operator" }) {
					t.Fatalf("key %s is an operator, but its line asks for %q", k.Fingerprint, asks)
				}
			case agentconfig.RoleViewer:
			default:
				t.Fatalf("key %s has role %q", k.Fingerprint, k.Role)
			}
			// The key's line alone gives the same answer: no other line
			// (but an earlier copy of the key) changes who it is.
			alone, _ := ParseAuthorizedKeys(line)
			if got, ok := alone.byWire[wire]; !ok || got.Role != k.Role || got.Comment != k.Comment {
				t.Fatalf("line %d alone gives %+v (ok %v), in the file %+v", k.Line, got, ok, k)
			}
			if ck, ok := ks.Lookup(pub); !ok || ck != k {
				t.Fatalf("Lookup of the key on line %d: %+v %v", k.Line, ck, ok)
			}
		}
	})
}
