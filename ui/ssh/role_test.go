package sshserve

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/internal/sshtest"
)

// TestEngineRefusesAViewersActor calls the engine's write paths directly
// with the actor of an SSH session: whatever a UI (or a modified client)
// sends, a viewer's apply, commit or rollback is refused by the engine, an
// operator's goes through, and the journal records who did it, with which
// key, from where.
func TestEngineRefusesAViewersActor(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "engine", "agentconfig", "testdata", "agent.multi-agent.device-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(path, raw, 0o640); err != nil {
		t.Fatal(err)
	}
	viewer := Identity{User: "victor", Fingerprint: "SHA256:viewerkey", Remote: "127.0.0.1:40001", Role: agentconfig.RoleViewer}
	operator := Identity{User: "olga", Fingerprint: "SHA256:operatorkey", Remote: "127.0.0.1:40002", Role: agentconfig.RoleOperator}
	next := append(append([]byte{}, raw...), "# changed over ssh\n"...)
	commit := func(id Identity) error {
		_, err := agentconfig.Commit(agentconfig.CommitRequest{Path: path, BaseHash: agentconfig.HashOf(raw), Data: next, Actor: id.Actor()})
		return err
	}

	t.Run("viewer", func(t *testing.T) {
		steps := []struct {
			name string
			do   func() error
		}{
			{"apply", func() error {
				_, err := partition.Apply(&partition.Plan{Config: path}, partition.ApplyOptions{Actor: viewer.Actor(), Force: true})
				return err
			}},
			{"commit", func() error { return commit(viewer) }},
			{"rollback", func() error {
				_, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: path, Actor: viewer.Actor(), Force: true})
				return err
			}},
		}
		for _, s := range steps {
			if err := s.do(); !errors.Is(err, agentconfig.ErrNotAllowed) {
				t.Errorf("%s by a viewer: %v, want ErrNotAllowed", s.name, err)
			}
		}
		if b, _ := os.ReadFile(path); string(b) != string(raw) {
			t.Fatal("a viewer changed the config")
		}
	})

	t.Run("operator", func(t *testing.T) {
		if err := commit(operator); err != nil {
			t.Fatalf("commit by an operator: %v", err)
		}
		recs, _, err := agentconfig.ReadJournal(agentconfig.JournalPath(path))
		if err != nil || len(recs) != 1 {
			t.Fatalf("journal: %d records, %v", len(recs), err)
		}
		r := recs[0]
		if r.Actor != "olga" || r.Origin != "ssh:127.0.0.1:40002 SHA256:operatorkey" || r.Key != "SHA256:operatorkey" || r.Role != agentconfig.RoleOperator {
			t.Fatalf("journal record: actor %q origin %q key %q role %q", r.Actor, r.Origin, r.Key, r.Role)
		}
		if _, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: path, Actor: operator.Actor()}); err != nil {
			t.Fatalf("rollback by an operator: %v", err)
		}
		if b, _ := os.ReadFile(path); string(b) != string(raw) {
			t.Fatal("the rollback did not restore the config")
		}
	})
}

func TestParseAuthorizedKeys(t *testing.T) {
	op, vw, other := sshtest.NewKey(t), sshtest.NewKey(t), sshtest.NewKey(t)
	tests := []struct {
		name     string
		file     string
		wantRole map[string]agentconfig.Role // fingerprint -> role; absent: refused
		warn     string
	}{
		{
			name: "roles",
			file: op.AuthLine(`environment="FGTOP_ROLE=operator"`, "o") + vw.AuthLine("", "v"),
			wantRole: map[string]agentconfig.Role{
				op.Fingerprint(): agentconfig.RoleOperator, vw.Fingerprint(): agentconfig.RoleViewer,
			},
		},
		{
			name:     "harmless options and other env",
			file:     op.AuthLine(`restrict,environment="LANG=C",environment="FGTOP_ROLE=operator"`, "o"),
			wantRole: map[string]agentconfig.Role{op.Fingerprint(): agentconfig.RoleOperator},
		},
		{
			name:     "unknown role is a viewer",
			file:     op.AuthLine(`environment="FGTOP_ROLE=opertor"`, "o"),
			wantRole: map[string]agentconfig.Role{op.Fingerprint(): agentconfig.RoleViewer},
			warn:     "is not a role",
		},
		{
			name:     "conflicting roles give the lesser",
			file:     op.AuthLine(`environment="FGTOP_ROLE=operator",environment="FGTOP_ROLE=viewer"`, "o"),
			wantRole: map[string]agentconfig.Role{op.Fingerprint(): agentconfig.RoleViewer},
			warn:     "given 2 times",
		},
		{
			name:     "restrictions not enforced skip the key",
			file:     op.AuthLine(`from="10.0.0.0/8"`, "o") + vw.AuthLine("", "v"),
			wantRole: map[string]agentconfig.Role{vw.Fingerprint(): agentconfig.RoleViewer},
			warn:     `option "from" is not enforced`,
		},
		{
			name:     "bad line skipped, others kept",
			file:     "ssh-ed25519 not-base64 x\n" + vw.AuthLine("", "v"),
			wantRole: map[string]agentconfig.Role{vw.Fingerprint(): agentconfig.RoleViewer},
			warn:     "line 1: not an OpenSSH public key",
		},
		{
			name:     "first line wins",
			file:     vw.AuthLine("", "v") + vw.AuthLine(`environment="FGTOP_ROLE=operator"`, "v2"),
			wantRole: map[string]agentconfig.Role{vw.Fingerprint(): agentconfig.RoleViewer},
			warn:     "repeats line 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ks, warns := ParseAuthorizedKeys([]byte(tt.file))
			for _, k := range []struct {
				name string
				fp   string
				key  func() (Key, bool)
			}{
				{"op", op.Fingerprint(), func() (Key, bool) { return ks.Lookup(op.PublicKey()) }},
				{"vw", vw.Fingerprint(), func() (Key, bool) { return ks.Lookup(vw.PublicKey()) }},
				{"other", other.Fingerprint(), func() (Key, bool) { return ks.Lookup(other.PublicKey()) }},
			} {
				got, ok := k.key()
				want, wantOK := tt.wantRole[k.fp]
				if ok != wantOK || got.Role != want {
					t.Errorf("key %s: role %q ok %v, want %q ok %v", k.name, got.Role, ok, want, wantOK)
				}
			}
			joined := strings.Join(warns, "\n")
			if (tt.warn == "") != (joined == "") || !strings.Contains(joined, tt.warn) {
				t.Errorf("warnings %q, want one with %q", joined, tt.warn)
			}
		})
	}
}
