package demo

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// TestAssetsCiteTheRepository: the files the demo writes for its node say
// where to read more, and every document they name is one of the
// repository's (the mock device list cited domain/backendai.md, which
// only the project's notes have).
func TestAssetsCiteTheRepository(t *testing.T) {
	mod, err := testfix.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc := regexp.MustCompile(`[A-Za-z0-9_./-]+\.md\b`)
	for name, text := range map[string]string{
		"agent.toml.tmpl": agentTOMLTemplate, "agent-slot.toml.tmpl": agentSlotTOMLTemplate,
		"mock-accelerator.toml": string(mockTOML), "mock-accelerator.etcd.json": string(mockEtcdJSON),
	} {
		for _, m := range doc.FindAllString(text, -1) {
			if _, err := os.Stat(filepath.Join(mod, m)); err != nil {
				t.Errorf("%s cites %s, which the repository lacks", name, m)
			}
		}
	}
}
