package main

import (
	"os"
	"testing"
)

// TestMain keeps the tests' consoles, servers and exporters from
// recording into the machine's /var/lib/fgtop/history, which they would
// now make when run as root: a test that records names its directory.
// A child given FGTOP_TEST_DEFAULT_HISTORY has its default directory
// there instead, and FGTOP_HISTORY left unset: the demo tests watch that
// directory stay untouched.
func TestMain(m *testing.M) {
	if d := os.Getenv("FGTOP_TEST_DEFAULT_HISTORY"); d != "" {
		defaultHistoryDir = d
	} else if _, set := os.LookupEnv("FGTOP_HISTORY"); !set {
		os.Setenv("FGTOP_HISTORY", "off")
	}
	os.Exit(m.Run())
}
