package main

import (
	"os"
	"testing"
)

// TestMain keeps the tests' consoles, servers and exporters from
// recording into the machine's /var/lib/fgtop/history, which they would
// now make when run as root: a test that records names its directory.
func TestMain(m *testing.M) {
	if _, set := os.LookupEnv("FGTOP_HISTORY"); !set {
		os.Setenv("FGTOP_HISTORY", "off")
	}
	os.Exit(m.Run())
}
