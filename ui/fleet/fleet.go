package fleet

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"

	"github.com/fgtop/fgtop/ui/console"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// Options configure the fleet console.
type Options struct {
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
	// At reads the fleet as it was at a moment, for :at, [ and ] (run in
	// a Cmd, its ctx cancelled when a newer read replaces it); nil when
	// the source cannot, and :at says so.
	At func(ctx context.Context, at time.Time) (*fleet.Fleet, error)
	// Step is how far [ and ] move the shown moment; DefaultStep when 0.
	Step time.Duration
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

// Model is the fleet console's root model: a table of nodes, one line
// each, and a node's own console (read-only, fed from the fleet's stream)
// when one is opened.
type Model struct {
	opts   Options
	Now    func() time.Time
	ch     <-chan *fleet.Fleet
	St     *kit.Styles
	Keys   kit.KeyMap
	Help   help.Model
	Width  int
	Height int

	fl     *fleet.Fleet
	Rows   []int // indices into fl.Nodes, filtered and sorted
	Cursor int
	offset int
	moved  bool // the user moved the cursor: it follows that node

	sortCol  string
	sortDesc bool
	Filter   string

	prompt     console.PromptMode
	Input      string
	promptPrev string
	showHelp   bool
	// helpTop is the help's first row shown, when it is taller than the
	// screen (helpPage rows at a time).
	helpTop, helpPage int
	Flash             kit.Flash

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
	drill     *console.App
	drillAddr string
	drillCh   chan *model.Snapshot
	drillLast *model.Snapshot

	// past is the moment shown by :at, [ and ] (fleet_past.go).
	past pastState
}

// New returns the fleet console's root model, rendering the fleet
// states received on fleets.
func New(fleets <-chan *fleet.Fleet, opts Options) *Model {
	m := &Model{opts: opts, Now: opts.Now, ch: fleets, Keys: newFleetKeyMap(), Help: help.New(), sortCol: "name"}
	if m.Now == nil {
		m.Now = time.Now
	}
	t := opts.Theme
	if t == nil {
		t = themes.Auto(opts.Background != "light")
	}
	st, err := kit.NewStyles(t, opts.ASCII)
	if err != nil {
		st, _ = kit.NewStyles(themes.Auto(true), opts.ASCII)
	}
	m.St = st
	m.Help.Styles = st.Help
	m.Help.Ellipsis = st.G.Ellipsis
	return m
}

// Init starts listening for fleet states and the clock.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.listen(), fleetTick())
}

func (m *Model) listen() tea.Cmd {
	return console.ListenLatest(m.ch, func(f *fleet.Fleet) tea.Msg { return fleetMsg{f} }, fleetClosedMsg{})
}

func fleetTick() tea.Cmd {
	return tea.Tick(console.TickInterval, func(time.Time) tea.Msg { return fleetTickMsg{} })
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case fleetMsg:
		if m.past.on {
			m.past.live = msg.f // kept for :live, not shown
			return m, m.listen()
		}
		m.adopt(msg.f)
		return m, tea.Batch(m.listen(), m.refit(false))
	case pastMsg:
		return m, m.takePast(msg)
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
		m.Width, m.Height = msg.Width, msg.Height
		if m.drill != nil {
			_, cmd := m.drill.Update(msg)
			return m, cmd
		}
		return m, nil
	case tea.KeyPressMsg:
		if m.drill != nil {
			return m, m.drillKey(msg)
		}
		return m, m.Key(msg)
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
func (m *Model) Show(f *fleet.Fleet) { m.adopt(f) }

// adopt makes a fleet state current and feeds the opened node's console.
func (m *Model) adopt(f *fleet.Fleet) {
	var sel string
	if m.Cursor < len(m.Rows) && m.fl != nil && m.moved {
		// The cursor follows the node the user chose; before any choice
		// it stays on the first row while names arrive and re-sort.
		sel = m.fl.Nodes[m.Rows[m.Cursor]].Addr
	}
	m.fl = f
	m.rebuild(sel)
	if m.drill != nil {
		n := f.Node(m.drillAddr)
		if n != nil {
			// The node may go stale, or come back, while it is open.
			m.drill.ShowVerdict(drillVerdict(n))
		}
		if n != nil && n.Snap != nil && n.Snap != m.drillLast {
			// The node says PAST while it shows the fleet's past moment; a
			// node the past fleet lacks keeps what it showed, and its
			// header with it.
			m.drill.ShowPast(m.pastShown())
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
func (m *Model) rebuild(sel string) {
	m.Rows = m.Rows[:0]
	if m.fl == nil {
		return
	}
	// The node console's filter, term by term: / reopens a kept filter
	// with a space after it, and the whole line matched as one string
	// then narrowed "gpu-node1" to gpu-node1 alone, and a second term
	// ("gpu-node1 !stale") to nothing.
	filter := render.CompileFilter(m.Filter)
	for i := range m.fl.Nodes {
		n := &m.fl.Nodes[i]
		if filter.MatchText(n.Name + " " + n.Address() + " " + n.Addr + " " + string(n.State) + " " + n.Reason) {
			m.Rows = append(m.Rows, i)
		}
	}
	now := m.shownNow()
	slices.SortStableFunc(m.Rows, func(a, b int) int {
		c := compareNodes(&m.fl.Nodes[a], &m.fl.Nodes[b], m.sortCol, now)
		if m.sortDesc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a, b))
	})
	m.Cursor = 0
	for i, r := range m.Rows {
		if m.fl.Nodes[r].Addr == sel {
			m.Cursor = i
		}
	}
	m.clamp()
}

// maxNamesListed is how many node names a filter that matches nothing
// lists: a large fleet's names would fill the screen.
const maxNamesListed = 24

// noMatchText says that the filter matches no node, naming the nodes
// there are (a name that matches nothing lists what exists), with the
// one it most likely misspells first.
func (m *Model) noMatchText() string {
	var names []string
	for i := range m.fl.Nodes {
		names = append(names, m.fl.Nodes[i].Name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := "no node matches the filter " + m.Filter
	if pat, inverted := strings.CutPrefix(strings.TrimSpace(m.Filter), "!"); !inverted {
		out += model.DidYouMean(pat, names)
	}
	listed := names[:min(len(names), maxNamesListed)]
	out += "; the nodes: " + strings.Join(listed, " ")
	if more := len(names) - len(listed); more > 0 {
		out += fmt.Sprintf(" and %d more", more)
	}
	return out + " (/ to change it)"
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

func (m *Model) clamp() {
	m.Cursor = max(min(m.Cursor, len(m.Rows)-1), 0)
	vis := m.visibleRows()
	if m.Cursor < m.offset {
		m.offset = m.Cursor
	}
	if vis > 0 && m.Cursor >= m.offset+vis {
		m.offset = m.Cursor - vis + 1
	}
	m.offset = max(min(m.offset, len(m.Rows)-vis), 0)
}

func (m *Model) flashf(l kit.Level, text string) {
	m.Flash = kit.Flash{Lvl: l, Text: text, Until: m.Now().Add(kit.FlashDuration(l))}
}

func (m *Model) expireFlash() {
	if m.Flash.Text != "" && !m.Now().Before(m.Flash.Until) {
		m.Flash = kit.Flash{}
	}
}

// Key handles a key on the fleet table.
func (m *Model) Key(msg tea.KeyPressMsg) tea.Cmd {
	if m.prompt != console.PromptNone {
		return m.promptKeyFleet(msg)
	}
	if m.showHelp {
		page := max(m.helpPage, 1)
		switch m.Keys.LookupIn(scFleet, msg) {
		case kit.ActQuit:
			return tea.Quit
		case kit.ActHelp, kit.ActBack:
			m.showHelp = false
		case kit.ActUp:
			m.helpTop--
		case kit.ActDown:
			m.helpTop++
		case kit.ActPageUp:
			m.helpTop -= page
		case kit.ActPageDown:
			m.helpTop += page
		case kit.ActTop:
			m.helpTop = 0
		case kit.ActBottom:
			m.helpTop = 1 << 30
		}
		// The view clamps it to what there is.
		m.helpTop = max(m.helpTop, 0)
		return nil
	}
	page := max(m.visibleRows()-1, 1)
	act := m.Keys.LookupIn(scFleet, msg)
	switch act {
	case kit.ActUp, kit.ActDown, kit.ActTop, kit.ActBottom, kit.ActPageUp, kit.ActPageDown:
		m.moved = true
	}
	switch act {
	case kit.ActQuit:
		return tea.Quit
	case kit.ActHelp:
		m.showHelp, m.helpTop = true, 0
	case kit.ActUp:
		m.Cursor--
	case kit.ActDown:
		m.Cursor++
	case kit.ActTop:
		m.Cursor = 0
	case kit.ActBottom:
		m.Cursor = len(m.Rows) - 1
	case kit.ActPageUp:
		m.Cursor -= page
	case kit.ActPageDown:
		m.Cursor += page
	case kit.ActFilter:
		m.prompt, m.Input, m.promptPrev = console.PromptFilter, console.FilterToExtend(m.Filter), m.Filter
	case kit.ActCommand:
		m.prompt, m.Input = console.PromptCommand, ""
	case kit.ActSort:
		i := slices.Index(fleetSortCols, m.sortCol)
		m.sortCol = fleetSortCols[(i+1)%len(fleetSortCols)]
		m.resort()
		m.flashf(kit.LvlInfo, "sorted by "+m.sortCol)
	case kit.ActSortReverse:
		m.sortDesc = !m.sortDesc
		m.resort()
	case kit.ActBack:
		switch {
		case m.fitText != "":
			m.fitText, m.fitReq, m.fits = "", nil, nil
		case m.Filter != "":
			m.Filter = ""
			m.resort()
		}
	case kit.ActDetail:
		return m.Open()
	case actPastPrev:
		return m.step(-1)
	case actPastNext:
		return m.step(1)
	}
	m.clamp()
	return nil
}

func (m *Model) resort() {
	sel := ""
	if m.Cursor < len(m.Rows) && m.fl != nil {
		sel = m.fl.Nodes[m.Rows[m.Cursor]].Addr
	}
	m.rebuild(sel)
}

// promptKeyFleet edits the filter or command line, as the node console
// does (promptKey).
func (m *Model) promptKeyFleet(msg tea.KeyPressMsg) tea.Cmd {
	return console.PromptKey(&m.prompt, &m.Input, m.promptPrev, msg, m.command,
		func(f string) { m.Filter = f; m.resort() },
		func() { m.flashf(kit.LvlWarn, console.PromptFullText()) })
}

// command runs a ':' command.
func (m *Model) command(line string) tea.Cmd {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	// A command's answer is its own: the last one's error would read as
	// this one's, as the node console's runCommand has it.
	m.Flash = kit.Flash{}
	cmds := fleetCommands()
	for _, c := range cmds {
		if slices.Contains(c.names, f[0]) {
			return c.run(m, f)
		}
	}
	hints := make([]string, len(cmds))
	for i, c := range cmds {
		hints[i] = c.hint
	}
	m.flashf(kit.LvlWarn, "unknown command :"+f[0]+" ("+strings.Join(hints, ", ")+")")
	return nil
}

// fleetCommand is one ':' command of the fleet console: the names it
// answers to, its usage as the unknown-command hint gives it, its usage
// and words in help, and what it does with the line's fields (f[0] is
// the name).
type fleetCommand struct {
	names             []string
	hint, usage, desc string
	run               func(m *Model, f []string) tea.Cmd
}

// fleetCommands is every ':' command, in the order help lists them: the
// one table command dispatches by and help and the hint are made from,
// so a command cannot work without being listed.
func fleetCommands() []fleetCommand {
	return []fleetCommand{
		{[]string{"fit"}, ":fit SLOTS", ":fit SLOTS", "where would cuda.shares=2.5,cpu=8,mem=64g fit? (esc or :fit clears)", (*Model).fitCommand},
		{[]string{"at"}, ":at TIME", ":at TIME", "the fleet as it was then: 14:02, yesterday 14:02, -2h, RFC 3339; [ ] step",
			(*Model).pastCommand},
		{[]string{"live"}, ":live", ":live", "back to the live fleet from :at", (*Model).pastCommand},
		{[]string{"sort"}, ":sort COL", ":sort COL [desc]", strings.Join(fleetSortCols, " "), func(m *Model, f []string) tea.Cmd {
			if len(f) < 2 || !slices.Contains(fleetSortCols, f[1]) {
				m.flashf(kit.LvlWarn, ":sort COL [asc|desc]: "+strings.Join(fleetSortCols, " "))
				return nil
			}
			m.sortCol = f[1]
			m.sortDesc = len(f) > 2 && f[2] == "desc"
			m.resort()
			return nil
		}},
		{[]string{"filter"}, ":filter TEXT", ":filter TEXT", "like /TEXT; !TEXT keeps what does not match", func(m *Model, f []string) tea.Cmd {
			m.Filter = strings.Join(f[1:], " ")
			m.resort()
			return nil
		}},
		{[]string{"q", "q!", "quit", "exit"}, ":q", ":q", "quit", func(*Model, []string) tea.Cmd { return tea.Quit }},
	}
}

// fitCommand runs :fit SLOTS; :fit alone clears it.
func (m *Model) fitCommand(f []string) tea.Cmd {
	if len(f) == 1 {
		m.fitText, m.fitReq, m.fits = "", nil, nil
		m.flashf(kit.LvlInfo, "fit cleared")
		return nil
	}
	text := strings.Join(f[1:], "")
	req, err := fleet.ParseRequest(text)
	if err == nil && m.fl != nil {
		err = m.fl.CheckSlots(req)
	}
	if err != nil {
		m.flashf(kit.LvlCrit, ":fit "+err.Error())
		return nil
	}
	m.fitText, m.fitReq, m.fits, m.fitAt = text, req, nil, nil
	return m.refit(true)
}

// refit runs the :fit request on every node's latest snapshot in a Cmd:
// at 100 nodes it is milliseconds of allocator work, kept off Update. A
// fleet state that brings no new snapshot keeps the results.
func (m *Model) refit(force bool) tea.Cmd {
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
func (m *Model) newSnapshots() bool {
	for i := range m.fl.Nodes {
		n := &m.fl.Nodes[i]
		if n.Snap != nil && !m.fitAt[n.Addr].Equal(n.Updated) {
			return true
		}
	}
	return false
}

// Open drills into the selected node: its own console, read-only, fed
// with its snapshots from the fleet.
func (m *Model) Open() tea.Cmd {
	if m.Cursor >= len(m.Rows) || m.fl == nil {
		return nil
	}
	n := &m.fl.Nodes[m.Rows[m.Cursor]]
	if n.Snap == nil {
		m.flashf(kit.LvlWarn, n.Name+": no snapshot yet ("+string(n.State)+")")
		return nil
	}
	m.drillAddr, m.drillLast = n.Addr, n.Snap
	m.drillCh = make(chan *model.Snapshot, 1)
	m.drillCh <- n.Snap
	m.drill = console.New(m.drillCh, console.Options{ReadOnly: true, Theme: m.St.Theme, ASCII: m.opts.ASCII, Now: m.opts.Now, NodeName: n.Name,
		Background: m.opts.Background, QuitIs: "back to the fleet",
		NoRecordWhy:  "the node's record is on the node; :at TIME in the fleet (esc back) shows every node then, fgtop fleet history asks their records",
		NoJournalWhy: "it is beside agent.toml on the node; open the node's own console (ssh -t to its fgtop serve) and :journal there"})
	w, h := m.size()
	m.drill.ShowPast(m.pastShown())
	m.drill.ShowVerdict(drillVerdict(n))
	m.drill.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m.drill.Init()
}

// drillVerdict is what the opened node's header says of a node whose
// figures are not current: its state as the table shows it, and why.
func drillVerdict(n *fleet.Node) (word, reason string) {
	if n.State != fleet.Stale && n.State != fleet.Unreachable {
		return "", ""
	}
	_, word = stateCell(n)
	return word, n.Reason
}

// drillKey passes a key to the opened node's console; q, or esc with
// nothing left to close there, comes back to the table, and ctrl+c quits.
func (m *Model) drillKey(msg tea.KeyPressMsg) tea.Cmd {
	a := m.drill
	idle := !a.ModalOpen()
	switch {
	case msg.String() == "ctrl+c":
		return tea.Quit
	case idle && (msg.String() == "q" || (msg.Code == tea.KeyEscape && a.Kernels.Filter == "")):
		m.closeDrill()
		return nil
	}
	_, cmd := a.Update(msg)
	return cmd
}

func (m *Model) closeDrill() {
	// Its clock and reads end with it: left running, the clock's next
	// message would reach the next node opened, which would then wait on
	// its own clock twice (and a goroutine on the old one, forever).
	m.drill.Close()
	close(m.drillCh)
	m.drill, m.drillCh, m.drillLast, m.drillAddr = nil, nil, nil, ""
}

func (m *Model) size() (int, int) { return kit.TermSize(m.Width, m.Height) }
