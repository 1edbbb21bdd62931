package placement

import (
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

func TestParseSettings(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   SettingsText
		err  string
		want func(Settings) bool
	}{
		{name: "defaults", in: SettingsText{Strategy: "evenly"}, want: func(s Settings) bool {
			return s.Strategy == alloc.Evenly && s.Order == nil && s.Quantum.IsZero() && !s.ForbidFragmentation
		}},
		{name: "fill", in: SettingsText{Strategy: "fill"}, want: func(s Settings) bool { return s.Strategy == alloc.Fill }},
		{name: "bad strategy", in: SettingsText{Strategy: "spread"}, err: `--strategy "spread": want evenly or fill`},
		{name: "affinity with a dash", in: SettingsText{Strategy: "evenly", Affinity: "prefer-single-node"}, want: func(s Settings) bool {
			return s.Policy == alloc.PreferSingleNode
		}},
		{name: "bad affinity", in: SettingsText{Strategy: "evenly", Affinity: "near"}, err: `--affinity "near": want interleaved or prefer-single-node`},
		// A typo names the value meant.
		{name: "strategy typo", in: SettingsText{Strategy: "evnely"}, err: `--strategy "evnely" (did you mean evenly?): want evenly or fill`},
		{name: "affinity typo", in: SettingsText{Strategy: "evenly", Affinity: "interleave"}, err: `--affinity "interleave" (did you mean interleaved?): want interleaved or prefer-single-node`},
		{name: "quantum", in: SettingsText{Strategy: "evenly", Quantum: "0.1"}, want: func(s Settings) bool { return s.Quantum.String() == "0.1" }},
		{name: "quantum zero", in: SettingsText{Strategy: "evenly", Quantum: "0"}, err: `--quantum "0": want a decimal > 0 such as 0.01`},
		{name: "quantum not finite", in: SettingsText{Strategy: "evenly", Quantum: "Infinity"}, err: `--quantum "Infinity"`},
		{name: "order skips blanks", in: SettingsText{Strategy: "evenly", Order: " cuda, ,cpu,"}, want: func(s Settings) bool {
			return slices.Equal(s.Order, []model.DeviceName{"cuda", "cpu"})
		}},
		{name: "no fragmentation", in: SettingsText{Strategy: "evenly", NoFragmentation: true}, want: func(s Settings) bool { return s.ForbidFragmentation }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSettings(tt.in)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !tt.want(s) {
				t.Fatalf("%+v (%v)", s, err)
			}
		})
	}
}
