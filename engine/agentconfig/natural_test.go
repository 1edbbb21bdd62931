package agentconfig

import (
	"slices"
	"testing"
)

func TestNaturalSort(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"digit runs as integers", []string{"cuda10", "cuda2", "cuda1"}, []string{"cuda1", "cuda2", "cuda10"}},
		{"plain numbers", []string{"10", "2", "1", "0"}, []string{"0", "1", "2", "10"}},
		{"several runs", []string{"nvme0n1p10", "nvme0n1p2", "nvme0n10p1"}, []string{"nvme0n1p2", "nvme0n1p10", "nvme0n10p1"}},
		{"text before digits", []string{"a", "1", "a1", ""}, []string{"", "1", "a", "a1"}},
		{"equal as numbers keep their order", []string{"a01", "a1", "a001"}, []string{"a01", "a1", "a001"}},
		{"uuids", []string{"c5-2d10", "c5-2d02", "c5-2d1"}, []string{"c5-2d1", "c5-2d02", "c5-2d10"}},
		{"huge numbers", []string{"x99999999999999999999999", "x100000000000000000000000"}, []string{"x99999999999999999999999", "x100000000000000000000000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Clone(tt.in)
			SortNatural(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("SortNatural(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNaturalCompareAntisymmetric(t *testing.T) {
	xs := []string{"", "0", "00", "1", "a", "a1", "a01", "1a", "a1b", "a1b2", "b", "10", "9", "cuda2", "cuda10"}
	for _, a := range xs {
		for _, b := range xs {
			if NaturalCompare(a, b) != -NaturalCompare(b, a) {
				t.Errorf("NaturalCompare(%q,%q)=%d but reversed %d", a, b, NaturalCompare(a, b), NaturalCompare(b, a))
			}
		}
	}
}
