package agentconfig

import (
	"slices"
	"testing"
)

func TestSearchPlaces(t *testing.T) {
	tests := []struct {
		name, home, env string
		want            []string
	}{
		{"home as ~", "/home/op", "", []string{"$BACKEND_CONFIG_FILE", "agent.toml", "~/.config/backend.ai/agent.toml", "/etc/backend.ai/agent.toml"}},
		{"the variable's value left out", "/home/op", "/srv/agent.toml", []string{"$BACKEND_CONFIG_FILE", "agent.toml", "~/.config/backend.ai/agent.toml", "/etc/backend.ai/agent.toml"}},
		{"root's home kept whole", "/", "", []string{"$BACKEND_CONFIG_FILE", "agent.toml", "/.config/backend.ai/agent.toml", "/etc/backend.ai/agent.toml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HOME", tt.home)
			t.Setenv("BACKEND_CONFIG_FILE", tt.env)
			if got := SearchPlaces(); !slices.Equal(got, tt.want) {
				t.Errorf("SearchPlaces() = %q, want %q", got, tt.want)
			}
		})
	}
}
