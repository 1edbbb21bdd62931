package sshserve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/internal/sshtest"
	"github.com/fgtop/fgtop/model"
	uiconsole "github.com/fgtop/fgtop/ui/console"
)

// agentConfigCopy copies the device-based agent.toml fixture (two agents,
// four GPUs) into a temp dir.
func agentConfigCopy(t *testing.T) (path string, raw []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "engine", "agentconfig", "testdata", "agent.multi-agent.device-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(path, raw, 0o640); err != nil {
		t.Fatal(err)
	}
	return path, raw
}

// fixtureHost is the host the agent.toml fixture describes: four GPUs of
// 1.00 fGPU, 32 cores, 256 GiB.
func fixtureHost() *model.Snapshot {
	s := &model.Snapshot{}
	for i := 1; i <= 4; i++ {
		s.Devices = append(s.Devices, model.Device{ID: model.DeviceID(fmt.Sprintf("c59395cd-ac91-4cd3-a1b0-3d2568aa2d%02d", i)),
			Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, Capacity: model.One, Index: i - 1})
	}
	for c := range 32 {
		s.Devices = append(s.Devices, model.Device{ID: model.DeviceID(fmt.Sprint(c)), Name: "cpu", Slot: model.SlotCPU,
			SlotType: model.SlotTypeCount, Capacity: model.One, Index: c})
	}
	s.Devices = append(s.Devices, model.Device{ID: "root", Name: "mem", Slot: model.SlotMem, SlotType: model.SlotTypeBytes, Capacity: model.NewDec(256<<30, 0)})
	return s
}

// TestSessionsShareOneDesk looks at what each session's console is given
// over real SSH: its own actor (the SSH user, the key's role, an origin
// with the client's address and the key's fingerprint) and the server's
// one desk. Then it uses those very actors on the desk, as the console
// would: the draft is lent to one operator at a time, the other sees who
// holds it, a viewer is refused by the engine whatever a UI sends, and an
// operator's apply is journaled under the session's identity.
func TestSessionsShareOneDesk(t *testing.T) {
	path, raw := agentConfigCopy(t)
	host := fixtureHost()
	desk := partition.NewDesk(partition.DeskOptions{Config: path, Snapshot: func() *model.Snapshot { return host }})
	var mu sync.Mutex
	got := map[string]uiconsole.Options{} // by SSH user
	f := startServer(t, func(c *Config) {
		c.UI.Desk = desk
		c.UI.Actor = agentconfig.Actor{Name: "template", Role: agentconfig.RoleAdmin}
	},
		func(s *Server) {
			next := s.newModel
			s.newModel = func(sub <-chan *model.Snapshot, o uiconsole.Options) sessionModel {
				mu.Lock()
				got[o.Actor.Name] = o
				mu.Unlock()
				return next(sub, o)
			}
		})
	type who struct {
		user  string
		key   interface{ Fingerprint() string }
		role  agentconfig.Role
		local string // the client's end of the connection
	}
	people := []*who{{user: "olga", key: f.operator, role: agentconfig.RoleOperator},
		{user: "oscar", key: f.operator, role: agentconfig.RoleOperator},
		{user: "victor", key: f.viewer, role: agentconfig.RoleViewer}}
	for _, p := range people {
		signer := f.viewer.Signer
		if p.role == agentconfig.RoleOperator {
			signer = f.operator.Signer
		}
		c := f.open(t, p.user, signer, nil)
		c.waitScreen(t, "gpu-node01")
		p.local = c.client.LocalAddr().String()
	}
	mu.Lock()
	defer mu.Unlock()
	actors := map[string]agentconfig.Actor{}
	for _, p := range people {
		o, ok := got[p.user]
		if !ok {
			t.Fatalf("no console was built for %s (got %d)", p.user, len(got))
		}
		fp := p.key.Fingerprint()
		a := o.Actor
		if a.Name != p.user || a.Role != p.role || a.Key != fp || a.Origin != "ssh:"+p.local+" "+fp {
			t.Errorf("%s's actor %+v, want role %s, key %s, origin from %s", p.user, a, p.role, fp, p.local)
		}
		if o.Desk != desk {
			t.Errorf("%s's console has desk %p, want the server's %p", p.user, o.Desk, desk)
		}
		if o.ReadOnly != (p.role == agentconfig.RoleViewer) {
			t.Errorf("%s's console: read-only %v", p.user, o.ReadOnly)
		}
		actors[p.user] = a
	}

	// One editor at a time: oscar sees olga, with her address and key.
	olga, err := desk.Open(actors["olga"], false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := desk.Open(actors["oscar"], false); !errors.Is(err, partition.ErrBusy) || !strings.Contains(err.Error(), "the draft is held by olga (ssh:") {
		t.Fatalf("oscar's Open while olga edits: %v, want ErrBusy naming olga", err)
	}
	if h, held := desk.Holder(); !held || !strings.Contains(h.String(), "olga ("+actors["olga"].Origin+") since ") {
		t.Fatalf("holder %q", h)
	}

	// The viewer is refused by the engine: the desk and the writer itself.
	plan := olga.Plan(partition.Request{Moves: []partition.Move{{Device: "cuda:c59395cd-ac91-4cd3-a1b0-3d2568aa2d03", Agent: "i-gpu-node01-numa1"}}})
	if _, err := desk.Open(actors["victor"], true); !errors.Is(err, agentconfig.ErrNotAllowed) {
		t.Errorf("the viewer's Open (take over): %v, want ErrNotAllowed", err)
	}
	if _, err := partition.Apply(plan, partition.ApplyOptions{Actor: actors["victor"], Force: true}); !errors.Is(err, agentconfig.ErrNotAllowed) {
		t.Errorf("the viewer's Apply: %v, want ErrNotAllowed", err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(raw) {
		t.Fatal("a viewer changed the config")
	}
	if h, _ := desk.Holder(); h.Actor.Name != "olga" {
		t.Fatalf("the viewer's refused take-over moved the draft to %q", h.Actor.Name)
	}

	// Olga's apply is journaled under her SSH identity.
	if _, err := olga.Apply(plan, false); err != nil {
		t.Fatalf("olga's apply: %v (plan errors %v)", err, plan.Errors)
	}
	recs, _, err := agentconfig.ReadJournal(agentconfig.JournalPath(path))
	if err != nil || len(recs) != 1 {
		t.Fatalf("journal: %d records, %v", len(recs), err)
	}
	if r := recs[0]; r.Actor != "olga" || r.Key != f.operator.Fingerprint() || r.Origin != actors["olga"].Origin || r.Role != agentconfig.RoleOperator {
		t.Fatalf("journal record: %+v", r)
	}
	olga.Close()
	if _, err := desk.Open(actors["oscar"], false); err != nil {
		t.Fatalf("oscar's Open after olga closed: %v", err)
	}
}

// crashOnZ is the real console, except that Z makes it panic: a console
// that breaks while its operator holds the draft.
type crashOnZ struct{ *uiconsole.App }

func (c crashOnZ) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "Z" {
		panic("the console broke while editing")
	}
	_, cmd := c.App.Update(msg)
	return c, cmd
}

// TestEndedSessionGivesTheDraftBack: an operator opens the editor over
// real SSH (so the desk lends the draft to that session), then the
// session ends in each way a session can end; the draft must be free
// again within a bounded time, or nobody can edit the partition until the
// server restarts.
func TestEndedSessionGivesTheDraftBack(t *testing.T) {
	ends := []struct {
		name string
		idle time.Duration
		end  func(t *testing.T, f *fixture, c *console)
	}{
		{name: "client gone", end: func(t *testing.T, f *fixture, c *console) { _ = c.client.Close() }},
		{name: "quit", end: func(t *testing.T, f *fixture, c *console) { c.press(t, "\x03") }},
		{name: "idle timeout", idle: 1500 * time.Millisecond, end: func(t *testing.T, f *fixture, c *console) { c.waitEnd(t) }},
		{name: "key revoked", end: func(t *testing.T, f *fixture, c *console) {
			sshtest.WriteAtomic(t, f.keysPath, f.viewer.AuthLine("", "victor@ops"))
		}},
		{name: "server shutdown", end: func(t *testing.T, f *fixture, c *console) {
			if err := f.srv.Close(); err != nil {
				t.Error(err)
			}
		}},
		{name: "console panic", end: func(t *testing.T, f *fixture, c *console) { c.press(t, "Z") }},
	}
	for _, tc := range ends {
		t.Run(tc.name, func(t *testing.T) {
			path, _ := agentConfigCopy(t)
			host := fixtureHost()
			desk := partition.NewDesk(partition.DeskOptions{Config: path, Snapshot: func() *model.Snapshot { return host }})
			f := startServer(t, func(c *Config) {
				c.UI.Desk = desk
				if tc.idle > 0 {
					c.IdleTimeout = tc.idle
				}
			}, func(s *Server) {
				next := s.newModel
				s.newModel = func(sub <-chan *model.Snapshot, o uiconsole.Options) sessionModel {
					return crashOnZ{next(sub, o).(*uiconsole.App)}
				}
			})
			c := f.open(t, "olga", f.operator.Signer, nil)
			c.waitScreen(t, "gpu-node01")
			c.press(t, "e")
			c.waitScreen(t, "Partition", "draft: you")
			if h, held := desk.Holder(); !held || h.Actor.Name != "olga" {
				t.Fatalf("after e: holder %v, held %v; want olga", h, held)
			}
			tc.end(t, f, c)
			waitUntil(t, "the draft given back", func() bool { _, held := desk.Holder(); return !held })
			// Someone else can edit now.
			s, err := desk.Open(agentconfig.Actor{Name: "oscar", Role: agentconfig.RoleOperator}, false)
			if err != nil {
				t.Fatalf("another operator after the session ended: %v", err)
			}
			s.Close()
		})
	}
}
