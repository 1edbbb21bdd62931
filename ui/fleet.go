package ui

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
)

// FleetOptions configure the fleet console.
type FleetOptions struct {
	// Theme, Background and ASCII are as in Options.
	Theme      *themes.Theme
	Background string
	ASCII      bool
	// Now is the clock for "last seen"; time.Now when nil.
	Now func() time.Time
	// Settings are the fleet-wide allocator settings :fit runs with.
	Settings fleet.Settings
	// Source says where the fleet is read from ("ssh: 3 hosts"), for the
	// header.
	Source string
}

// Messages of the fleet console.
type (
	fleetMsg       struct{ f *fleet.Fleet }
	fleetClosedMsg struct{}
	fleetTickMsg   struct{}
	// fitMsg is a :fit computed off the Update loop.
	fitMsg struct {
		seq  int
		fits map[string]fleet.Fit
		at   map[string]time.Time
	}
)

// The fleet table's sort columns.
var fleetSortCols = []string{"name", "state", "free", "largest", "pieces", "held", "kernels", "issues", "seen"}

// Fleet is the fleet console's root model: a table of nodes, one line
// each, and a node's own console (read-only, fed from the fleet's stream)
// when one is opened.
type Fleet struct {
	opts   FleetOptions
	now    func() time.Time
	ch     <-chan *fleet.Fleet
	st     *Styles
	keys   KeyMap
	help   help.Model
	width  int
	height int

	fl     *fleet.Fleet
	rows   []int // indices into fl.Nodes, filtered and sorted
	cursor int
	offset int
	moved  bool // the user moved the cursor: it follows that node

	sortCol  string
	sortDesc bool
	filter   string

	prompt     promptMode
	input      string
	promptPrev string
	showHelp   bool
	flash      flash

	// The :fit request in force, its results per node address, and the
	// sequence number of the last one asked (a slow result for an older
	// request is dropped).
	fitText string
	fitReq  alloc.Request
	fits    map[string]fleet.Fit
	fitAt   map[string]time.Time // when each result's snapshot came
	fitSeq  int

	// The opened node: its console and the channel that feeds it the
	// node's snapshots from the fleet.
	drill     *App
	drillAddr string
	drillCh   chan *model.Snapshot
	drillLast *model.Snapshot
}

// NewFleet returns the fleet console's root model, rendering the fleet
// states received on fleets.
func NewFleet(fleets <-chan *fleet.Fleet, opts FleetOptions) *Fleet {
	m := &Fleet{opts: opts, now: opts.Now, ch: fleets, keys: newFleetKeyMap(), help: help.New(), sortCol: "name"}
	if m.now == nil {
		m.now = time.Now
	}
	t := opts.Theme
	if t == nil {
		t = themes.Auto(opts.Background != "light")
	}
	st, err := NewStyles(t, opts.ASCII)
	if err != nil {
		st, _ = NewStyles(themes.Auto(true), opts.ASCII)
	}
	m.st = st
	m.help.Styles = st.Help
	m.help.Ellipsis = st.G.Ellipsis
	return m
}

// Init starts listening for fleet states and the clock.
func (m *Fleet) Init() tea.Cmd {
	return tea.Batch(m.listen(), fleetTick())
}

func (m *Fleet) listen() tea.Cmd {
	return listenLatest(m.ch, func(f *fleet.Fleet) tea.Msg { return fleetMsg{f} }, fleetClosedMsg{})
}

func fleetTick() tea.Cmd {
	return tea.Tick(tickInterval, func(time.Time) tea.Msg { return fleetTickMsg{} })
}

// Update handles a message.
func (m *Fleet) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case fleetMsg:
		m.adopt(msg.f)
		return m, tea.Batch(m.listen(), m.refit(false))
	case fleetClosedMsg:
		return m, nil
	case fleetTickMsg:
		m.expireFlash()
		return m, fleetTick()
	case fitMsg:
		if msg.seq == m.fitSeq {
			m.fits, m.fitAt = msg.fits, msg.at
		}
		return m, nil
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		if m.drill != nil {
			_, cmd := m.drill.Update(msg)
			return m, cmd
		}
		return m, nil
	case tea.KeyPressMsg:
		if m.drill != nil {
			return m, m.drillKey(msg)
		}
		return m, m.key(msg)
	}
	if m.drill != nil {
		// The node console's own messages (its snapshots, ticks, frames).
		_, cmd := m.drill.Update(msg)
		return m, cmd
	}
	return m, nil
}

// Show adopts a fleet state as if it had come on the channel (tools and
// benchmarks that drive the model without a program).
func (m *Fleet) Show(f *fleet.Fleet) { m.adopt(f) }

// adopt makes a fleet state current and feeds the opened node's console.
func (m *Fleet) adopt(f *fleet.Fleet) {
	var sel string
	if m.cursor < len(m.rows) && m.fl != nil && m.moved {
		// The cursor follows the node the user chose; before any choice
		// it stays on the first row while names arrive and re-sort.
		sel = m.fl.Nodes[m.rows[m.cursor]].Addr
	}
	m.fl = f
	m.rebuild(sel)
	if m.drill != nil {
		if n := f.Node(m.drillAddr); n != nil && n.Snap != nil && n.Snap != m.drillLast {
			m.drillLast = n.Snap
			select { // latest wins
			case <-m.drillCh:
			default:
			}
			m.drillCh <- n.Snap
		}
	}
}

// rebuild filters and sorts the rows, keeping the cursor on sel.
func (m *Fleet) rebuild(sel string) {
	m.rows = m.rows[:0]
	if m.fl == nil {
		return
	}
	pat, invert := m.filter, false
	if rest, ok := strings.CutPrefix(pat, "!"); ok {
		pat, invert = rest, true
	}
	pat = strings.ToLower(pat)
	for i := range m.fl.Nodes {
		n := &m.fl.Nodes[i]
		hit := pat == "" || strings.Contains(strings.ToLower(n.Name+" "+n.Addr+" "+string(n.State)+" "+n.Reason), pat)
		if hit != invert || pat == "" {
			m.rows = append(m.rows, i)
		}
	}
	now := m.now()
	slices.SortStableFunc(m.rows, func(a, b int) int {
		c := compareNodes(&m.fl.Nodes[a], &m.fl.Nodes[b], m.sortCol, now)
		if m.sortDesc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a, b))
	})
	m.cursor = 0
	for i, r := range m.rows {
		if m.fl.Nodes[r].Addr == sel {
			m.cursor = i
		}
	}
	m.clamp()
}

func fleetStateRank(s fleet.State) int {
	return map[fleet.State]int{fleet.Live: 0, fleet.Connecting: 1, fleet.Stale: 2, fleet.Unreachable: 3}[s]
}

// compareNodes orders two nodes by a column; nodes without figures last.
func compareNodes(a, b *fleet.Node, col string, now time.Time) int {
	dec := func(f func(*fleet.Node) model.Dec) int {
		switch {
		case a.Snap == nil && b.Snap == nil:
			return 0
		case a.Snap == nil:
			return 1
		case b.Snap == nil:
			return -1
		}
		return -f(a).Cmp(f(b)) // most first
	}
	switch col {
	case "state":
		return cmp.Compare(fleetStateRank(b.State), fleetStateRank(a.State)) // the worst first
	case "free":
		return dec(func(n *fleet.Node) model.Dec { return n.Sum.Free })
	case "largest":
		return dec(func(n *fleet.Node) model.Dec { return n.Sum.Largest })
	case "held":
		return dec(func(n *fleet.Node) model.Dec { return n.Sum.Held })
	case "pieces":
		return cmp.Compare(b.Sum.Pieces, a.Sum.Pieces)
	case "kernels":
		return cmp.Compare(b.Sum.Kernels, a.Sum.Kernels)
	case "issues":
		return cmp.Compare(b.Sum.Issues, a.Sum.Issues)
	case "seen":
		return b.LastSeen.Compare(a.LastSeen) * -1 // the longest silent first
	}
	return cmp.Compare(a.Name, b.Name)
}

func (m *Fleet) clamp() {
	m.cursor = max(min(m.cursor, len(m.rows)-1), 0)
	vis := m.visibleRows()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if vis > 0 && m.cursor >= m.offset+vis {
		m.offset = m.cursor - vis + 1
	}
	m.offset = max(min(m.offset, len(m.rows)-vis), 0)
}

func (m *Fleet) flashf(l level, text string) {
	m.flash = flash{lvl: l, text: text, until: m.now().Add(flashDuration(l))}
}

func (m *Fleet) expireFlash() {
	if m.flash.text != "" && !m.now().Before(m.flash.until) {
		m.flash = flash{}
	}
}

// key handles a key on the fleet table.
func (m *Fleet) key(msg tea.KeyPressMsg) tea.Cmd {
	if m.prompt != promptNone {
		return m.promptKeyFleet(msg)
	}
	if m.showHelp {
		switch m.keys.lookupIn(scFleet, msg) {
		case actQuit:
			return tea.Quit
		case actHelp, actBack:
			m.showHelp = false
		}
		return nil
	}
	page := max(m.visibleRows()-1, 1)
	act := m.keys.lookupIn(scFleet, msg)
	switch act {
	case actUp, actDown, actTop, actBottom, actPageUp, actPageDown:
		m.moved = true
	}
	switch act {
	case actQuit:
		return tea.Quit
	case actHelp:
		m.showHelp = true
	case actUp:
		m.cursor--
	case actDown:
		m.cursor++
	case actTop:
		m.cursor = 0
	case actBottom:
		m.cursor = len(m.rows) - 1
	case actPageUp:
		m.cursor -= page
	case actPageDown:
		m.cursor += page
	case actFilter:
		m.prompt, m.input, m.promptPrev = promptFilter, m.filter, m.filter
	case actCommand:
		m.prompt, m.input = promptCommand, ""
	case actSort:
		i := slices.Index(fleetSortCols, m.sortCol)
		m.sortCol = fleetSortCols[(i+1)%len(fleetSortCols)]
		m.resort()
		m.flashf(lvlInfo, "sorted by "+m.sortCol)
	case actSortReverse:
		m.sortDesc = !m.sortDesc
		m.resort()
	case actBack:
		switch {
		case m.fitText != "":
			m.fitText, m.fitReq, m.fits = "", nil, nil
		case m.filter != "":
			m.filter = ""
			m.resort()
		}
	case actDetail:
		return m.open()
	}
	m.clamp()
	return nil
}

func (m *Fleet) resort() {
	sel := ""
	if m.cursor < len(m.rows) && m.fl != nil {
		sel = m.fl.Nodes[m.rows[m.cursor]].Addr
	}
	m.rebuild(sel)
}

// promptKeyFleet edits the filter or command line, as the node console
// does (promptKey).
func (m *Fleet) promptKeyFleet(msg tea.KeyPressMsg) tea.Cmd {
	return promptKey(&m.prompt, &m.input, m.promptPrev, msg, m.command,
		func(f string) { m.filter = f; m.resort() },
		func() { m.flashf(lvlWarn, promptFullText) })
}

// command runs a ':' command.
func (m *Fleet) command(line string) tea.Cmd {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	switch f[0] {
	case "q", "q!", "quit", "exit":
		return tea.Quit
	case "fit":
		if len(f) == 1 {
			m.fitText, m.fitReq, m.fits = "", nil, nil
			m.flashf(lvlInfo, "fit cleared")
			return nil
		}
		text := strings.Join(f[1:], "")
		req, err := fleet.ParseRequest(text)
		if err == nil && m.fl != nil {
			err = m.fl.CheckSlots(req)
		}
		if err != nil {
			m.flashf(lvlCrit, ":fit "+err.Error())
			return nil
		}
		m.fitText, m.fitReq, m.fits, m.fitAt = text, req, nil, nil
		return m.refit(true)
	case "sort":
		if len(f) < 2 || !slices.Contains(fleetSortCols, f[1]) {
			m.flashf(lvlWarn, ":sort COL [asc|desc]: "+strings.Join(fleetSortCols, " "))
			return nil
		}
		m.sortCol = f[1]
		m.sortDesc = len(f) > 2 && f[2] == "desc"
		m.resort()
		return nil
	case "filter":
		m.filter = strings.Join(f[1:], " ")
		m.resort()
		return nil
	}
	m.flashf(lvlWarn, "unknown command :"+f[0]+" (:fit SLOTS, :sort COL, :filter TEXT, :q)")
	return nil
}

// refit runs the :fit request on every node's latest snapshot in a Cmd:
// at 100 nodes it is milliseconds of allocator work, kept off Update. A
// fleet state that brings no new snapshot keeps the results.
func (m *Fleet) refit(force bool) tea.Cmd {
	if m.fitReq == nil || m.fl == nil {
		return nil
	}
	if !force && m.fits != nil && !m.newSnapshots() {
		return nil
	}
	m.fitSeq++
	seq, req, fl, settings := m.fitSeq, m.fitReq, m.fl, m.opts.Settings
	return func() tea.Msg {
		out := make(map[string]fleet.Fit, len(fl.Nodes))
		at := make(map[string]time.Time, len(fl.Nodes))
		for i := range fl.Nodes {
			n := &fl.Nodes[i]
			if n.Snap != nil && !n.Sum.TooLarge { // too large: not searched (issue 23)
				out[n.Addr], at[n.Addr] = fleet.FitRequest(n.Snap, req, settings), n.Updated
			}
		}
		return fitMsg{seq: seq, fits: out, at: at}
	}
}

// newSnapshots says whether a node's snapshot changed since the fits were
// computed (a heartbeat-only state changes none).
func (m *Fleet) newSnapshots() bool {
	for i := range m.fl.Nodes {
		n := &m.fl.Nodes[i]
		if n.Snap != nil && !m.fitAt[n.Addr].Equal(n.Updated) {
			return true
		}
	}
	return false
}

// open drills into the selected node: its own console, read-only, fed
// with its snapshots from the fleet.
func (m *Fleet) open() tea.Cmd {
	if m.cursor >= len(m.rows) || m.fl == nil {
		return nil
	}
	n := &m.fl.Nodes[m.rows[m.cursor]]
	if n.Snap == nil {
		m.flashf(lvlWarn, n.Name+": no snapshot yet ("+string(n.State)+")")
		return nil
	}
	m.drillAddr, m.drillLast = n.Addr, n.Snap
	m.drillCh = make(chan *model.Snapshot, 1)
	m.drillCh <- n.Snap
	m.drill = newApp(m.drillCh, Options{ReadOnly: true, Theme: m.st.Theme, ASCII: m.opts.ASCII, Now: m.opts.Now, NodeName: n.Name,
		Background: m.opts.Background})
	w, h := m.size()
	m.drill.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m.drill.Init()
}

// drillKey passes a key to the opened node's console; q, or esc with
// nothing left to close there, comes back to the table, and ctrl+c quits.
func (m *Fleet) drillKey(msg tea.KeyPressMsg) tea.Cmd {
	a := m.drill
	idle := !a.modalOpen()
	switch {
	case msg.String() == "ctrl+c":
		return tea.Quit
	case idle && (msg.String() == "q" || (msg.Code == tea.KeyEscape && a.kernels.filter == "")):
		m.closeDrill()
		return nil
	}
	_, cmd := a.Update(msg)
	return cmd
}

func (m *Fleet) closeDrill() {
	close(m.drillCh)
	m.drill, m.drillCh, m.drillLast, m.drillAddr = nil, nil, nil, ""
}

func (m *Fleet) size() (int, int) { return termSize(m.width, m.height) }
