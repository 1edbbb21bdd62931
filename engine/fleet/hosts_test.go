package fleet

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseHosts(t *testing.T) {
	cases := []struct {
		in   string
		want string
		err  string
	}{
		{"a:1,b:2", "a:1 b:2", ""},
		{"# fleet\nnode01   # rack 1\nnode02:2200\n\n10.0.0.3, node01", "node01:2222 node02:2200 10.0.0.3:2222", ""},
		{"[::1]:2222 ::1", "[::1]:2222", ""},
		{"a:0", "", "port"},
		{"a:x", "", "port"},
		{":22", "", "no host"},
		{"user@host:22", "", "line 1: a login name before '@' is not taken in --hosts: give it once for every node with --user NAME"},
		{"a:x", "", `"a"…: the port after ':' is not a number`},
		{"# only comments\n", "", "no hosts"},
		{"node-01.rack_2.example.com.:22 fe80::1%eth0 [fe80::1%eth0]:22", "node-01.rack_2.example.com.:22 [fe80::1%eth0]:2222 [fe80::1%eth0]:22", ""},
		{"-node", "", "not a host name"},
		{"a..b", "", "not a host name"},
		{"a/b", "", `"a"…: not a host name`},
		{"[a:SECRET]:22", "", `""…: not a host name`},
		{"node01\nroot:x:0:0:root:/root:/bin/bash\nnode02", "", `line 2: "root"…: not a host name or address`},
	}
	// A line of a file given by mistake that has an '@' in it is not
	// quoted either.
	if _, err := ParseHosts("node01\nalice@example.com:$6$SECRET\n"); err == nil || strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "alice") {
		t.Errorf("an '@' line: %v", err)
	}
	for _, c := range cases {
		got, err := ParseHosts(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: err %v, want %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err == "" && strings.Join(got, " ") != c.want:
			t.Errorf("%q: %q, want %q", c.in, strings.Join(got, " "), c.want)
		}
	}
}

// TestHostsFileOfSecrets: a file that is not a hosts file (/etc/shadow)
// is refused whole, its bad lines named by number, and the error quotes
// nothing past a line's host part: before, each line became a node name,
// password hash and all.
func TestHostsFileOfSecrets(t *testing.T) {
	var shadow strings.Builder
	secrets := []string{}
	for i := range 12 {
		secret := fmt.Sprintf("$6$salt%02d$SECRETHASH%02dabcdefABCDEF0123456789./", i, i)
		if i%3 == 2 {
			// An old DES hash: host-name characters only.
			secret = fmt.Sprintf("SECRETdes%02dAbCdEf", i)
		}
		secrets = append(secrets, secret)
		fmt.Fprintf(&shadow, "user%02d:%s:19000:0:99999:7:::\n", i, secret)
	}
	_, err := ParseHosts(shadow.String())
	if err == nil {
		t.Fatal("a shadow file read as hosts")
	}
	msg := err.Error()
	if !strings.Contains(msg, "12 lines are not hosts") || !strings.Contains(msg, "lines 1, 2, 3, 4, 5 and 7 more") ||
		!strings.Contains(msg, `line 1: "user00"…`) {
		t.Fatalf("error %q: want the count, the first line numbers and the first line's host part", msg)
	}
	for _, s := range secrets {
		if strings.Contains(msg, s[:10]) {
			t.Fatalf("error %q quotes a secret (%s)", msg, s)
		}
	}
	if strings.Contains(msg, "SECRET") || strings.Contains(msg, "19000") {
		t.Fatalf("error %q quotes more than a host part", msg)
	}
}

// FuzzParseHosts: a hosts file never crashes the parser, every host it
// accepts is a HOST:PORT that parses again to itself, and an error never
// quotes what follows a bad host's first ':'.
func FuzzParseHosts(f *testing.F) {
	f.Add("node01\nnode02:2200 # c\n[::1]:22,a")
	f.Add("root:$6$salt$hash:19000:0:99999:7:::\nbin:*:19000::::::")
	f.Add("root:x:0:0:root:/root:/bin/bash")
	f.Add("a:SECRET")
	f.Add("[a:SECRET]:22")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<16 {
			return
		}
		hosts, err := ParseHosts(text)
		if err != nil {
			if strings.Contains(err.Error(), ":SECRET") || len(err.Error()) > 1024 {
				t.Fatalf("error %q: quotes past a host part, or is unbounded", err)
			}
			return
		}
		for _, h := range hosts {
			again, err := ParseHosts(h)
			if err != nil || len(again) != 1 || again[0] != h {
				t.Fatalf("%q: parses again to %q, %v", h, again, err)
			}
		}
	})
}

// TestHostsFileTypos: a fleet file saved with a byte-order mark read its
// first host as "not a host name or address", quoted `""…`; it is read as
// without one. A port after a space ("node01 2222", ssh-keyscan's and
// ssh_config's habit) was a second host "2222": node01 was dialled at 2222
// and 2222:2222 failed to resolve at run time; the file is refused, saying
// how a port is written.
func TestHostsFileTypos(t *testing.T) {
	if got, err := ParseHosts("\uFEFFnode01:2200\nnode02\n"); err != nil || strings.Join(got, " ") != "node01:2200 node02:2222" {
		t.Errorf("a file with a byte-order mark: %q, %v", got, err)
	}
	for _, in := range []string{"node01\n10.0.0.2 2200\n", "node01 2200"} {
		_, err := ParseHosts(in)
		if err == nil || !strings.Contains(err.Error(), `"2200": a number, not a host name: a port follows its host after ':' (node01:2222), not a space`) {
			t.Errorf("%q: %v, want the port after a space refused", in, err)
		}
	}
	if _, err := LoadHosts("node01 2200"); err == nil || !strings.Contains(err.Error(), `item 2 "2200": a number`) {
		t.Errorf("inline: %v", err)
	}
}
