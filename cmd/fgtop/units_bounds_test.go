package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	sshserve "github.com/fgtop/fgtop/ui/ssh"
)

// unitService reads a systemd unit's [Service] settings, continuation
// lines joined.
func unitService(t *testing.T, name string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "contrib", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	section, pending := "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if pending != "" {
			line = pending + " " + line
			pending = ""
		}
		if strings.HasSuffix(line, `\`) {
			pending = strings.TrimSuffix(line, `\`)
			continue
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, v, _ := strings.Cut(line, "=")
			out[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// unitBytes reads a systemd size (1024-based K, M, G, T suffixes).
func unitBytes(s string) (int64, bool) {
	mult := int64(1)
	if n := len(s); n > 0 {
		if i := strings.IndexByte("KMGT", s[n-1]); i >= 0 {
			mult = int64(1) << (10 * (i + 1))
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v * mult, err == nil && v > 0
}

// TestShippedUnitsBoundTheProcess: the shipped units cap descriptors and
// memory, as a last bound should a limit inside fgtop fail (issue 31:
// 15,000 banner-only connections held 15,013 descriptors, and a viewer's
// reads took serve past 6 GB), with room for what the defaults allow; and
// every flag their ExecStart passes exists.
func TestShippedUnitsBoundTheProcess(t *testing.T) {
	for _, tc := range []struct {
		unit       string
		cmd        *cobra.Command
		minFiles   int64
		minMemory  int64
		maxMemory  int64
		maxFilesOK int64
	}{
		// serve: every connection waiting for its handshake, every
		// session, and the engine's own files.
		{"fgtop-serve.service", newServeCmd(), int64(sshserve.DefaultMaxStartups.Full + sshserve.DefaultMaxSessions + 256), 512 << 20, 8 << 30, 65536},
		{"fgtop-record.service", newRecordCmd(), 256, 256 << 20, 4 << 30, 65536},
	} {
		svc := unitService(t, tc.unit)
		files, err := strconv.ParseInt(svc["LimitNOFILE"], 10, 64)
		if err != nil || files < tc.minFiles || files > tc.maxFilesOK {
			t.Errorf("%s: LimitNOFILE=%q: want one number from %d to %d (soft and hard alike: Go raises its soft limit to the hard one)",
				tc.unit, svc["LimitNOFILE"], tc.minFiles, tc.maxFilesOK)
		}
		mem, ok := unitBytes(svc["MemoryMax"])
		if !ok || mem < tc.minMemory || mem > tc.maxMemory {
			t.Errorf("%s: MemoryMax=%q: want a size from %d MiB to %d GiB", tc.unit, svc["MemoryMax"], tc.minMemory>>20, tc.maxMemory>>30)
		}
		for _, w := range strings.Fields(svc["ExecStart"]) {
			name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
			if strings.HasPrefix(w, "--") && tc.cmd.Flags().Lookup(name) == nil {
				t.Errorf("%s: ExecStart passes %s, which fgtop %s does not have", tc.unit, w, tc.cmd.Name())
			}
		}
	}
}
