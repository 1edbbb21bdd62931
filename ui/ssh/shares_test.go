package sshserve

import "testing"

func TestLeastMaxSessions(t *testing.T) {
	for _, tt := range []struct {
		max, viewers, streams, want int
	}{
		{16, 0, 0, 16},
		{2, 0, 0, 3},
		{1, 0, 0, 3},
		{4, 2, 2, 5},
		{4, 3, 0, 5},
		{8, 7, 0, 10},
		{3, 1, 1, 3},
	} {
		if got := LeastMaxSessions(tt.max, tt.viewers, tt.streams); got != tt.want {
			t.Errorf("LeastMaxSessions(%d, %d, %d) = %d, want %d", tt.max, tt.viewers, tt.streams, got, tt.want)
		}
	}
}
