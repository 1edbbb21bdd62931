package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFleetHostsFileOfSecrets: `fleet --hosts @FILE` on a planted file
// that is not a hosts file (a copy of /etc/shadow's shape) exits 2 naming
// the bad lines, and prints no more of any line than its host part;
// before, every line became a node name on the screen, hash included.
func TestFleetHostsFileOfSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shadow")
	shadow := "root:$6$Zq1salt$HASHSECRETroot0123456789abcdefABCDEF./:19700:0:99999:7:::\n" +
		"daemon:*:19700:0:99999:7:::\n" +
		"olga:SECRETdesHASH1:19700:0:99999:7:::\n" +
		"# a comment\n" +
		"node01\n"
	if err := os.WriteFile(path, []byte(shadow), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runFleetCmd(t, "--hosts", "@"+path, "--once", "--json")
	if code != exitBadUsage || out != "" {
		t.Fatalf("exit %d, stdout %q; want 2 and nothing", code, out)
	}
	for _, want := range []string{"--hosts @" + path, "3 lines are not hosts", "lines 1, 2, 3", `line 1: "root"…`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q: no %q", errOut, want)
		}
	}
	for _, secret := range []string{"SECRET", "$6$", "19700", "Zq1salt", "daemon:*"} {
		if strings.Contains(errOut, secret) {
			t.Errorf("stderr %q shows %q, past a line's host part", errOut, secret)
		}
	}
}
