package sshserve

import (
	"os"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
)

// TestRefusalBannerKeysUnreadable: while the authorized keys file cannot
// be read (here: unsafe permissions), every key is refused, the known
// ones too; the banner says the server cannot check keys now, not that
// the client's keys are not authorized and should be added: an operator
// whose key is in the file was told to ask for it to be added. A client
// refused with the file readable is still told its keys are not in it.
func TestRefusalBannerKeysUnreadable(t *testing.T) {
	f := startServer(t, nil)
	banner := func(key gossh.Signer) string {
		t.Helper()
		var got strings.Builder
		cfg := &gossh.ClientConfig{User: "olga", HostKeyCallback: gossh.InsecureIgnoreHostKey(),
			Auth: []gossh.AuthMethod{gossh.PublicKeys(key),
				gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) { return nil, nil })},
			BannerCallback: func(m string) error { got.WriteString(m); return nil }}
		c, err := gossh.Dial("tcp", f.addr, cfg)
		if err == nil {
			c.Close()
			t.Fatal("logged in")
		}
		return got.String()
	}
	if b := banner(f.stranger); !strings.Contains(b, "none of your keys is authorized") {
		t.Errorf("an unknown key's banner:\n%s", b)
	}
	if err := os.Chmod(f.keysPath, 0o666); err != nil {
		t.Fatal(err)
	}
	f.srv.reloadKeys()
	b := banner(f.operator)
	if strings.Contains(b, "none of your keys is authorized") || strings.Contains(b, "add your public key") || !strings.Contains(b, "cannot check keys now") {
		t.Errorf("an authorized key refused while the file cannot be read is told:\n%s", b)
	}
}
