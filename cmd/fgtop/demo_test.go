package main

import "testing"

func TestDemoUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"zero speed", []string{"demo", "--speed", "0", "--headless"}},
		{"negative speed", []string{"demo", "--speed", "-2", "--headless"}},
		{"speed too high", []string{"demo", "--speed", "5000", "--headless"}},
		{"bad seed", []string{"demo", "--seed", "x", "--headless"}},
		{"argument", []string{"demo", "extra"}},
		{"negative idle-after", []string{"demo", "--idle-after", "-5s", "--headless"}},
		{"snapshot negative idle-after", []string{"snapshot", "--idle-after", "-1m", "--scratch-root", "/nonexistent"}},
		{"idle-after on plan", []string{"plan", "--idle-after", "1m"}},
		{"unknown partition", []string{"demo", "--partition", "bep", "--headless"}},
		{"negative restart-after", []string{"demo", "--restart-after", "-1s", "--headless"}},
		// No console to draw: a theme typo went unread and the demo ran.
		{"theme without a console", []string{"demo", "--headless", "--theme", "lite"}},
		{"ascii without a console", []string{"demo", "--headless", "--ascii"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := run(tt.args); code != exitBadUsage {
				t.Errorf("exit code %d, want %d", code, exitBadUsage)
			}
		})
	}
}
