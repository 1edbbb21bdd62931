package fleet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/history/histtext"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// RecordAt is a node's answer to `snapshot --at TIME` over SSH: the
// fgtop.snapshot/v1 document its own record (the history directory dir)
// holds at at, one compact line. Where the record lacks that moment (before
// it begins, after it ends, or in a gap) it says so, and gives nothing:
// the node as last recorded is not the node then. self are the names the
// node that answers goes by (none takes any): a record that names another
// node at that moment and at its last is refused, as the fleet would show
// that node's figures under this node's address.
func RecordAt(dir string, self []string, at time.Time) ([]byte, error) {
	rd, err := history.OpenReader(dir)
	if err != nil {
		return nil, fmt.Errorf("the node's record: %w", err)
	}
	res, err := rd.At(at)
	if err != nil {
		return nil, fmt.Errorf("the node's record lacks %s: %w", AtStamp(at), err)
	}
	if !res.Exact {
		if m, ok := holding(res.Missing, at); ok {
			// The gap's own words: a damaged segment, a recorder that
			// was not running, not only that there is a gap.
			return nil, fmt.Errorf("the node's record lacks %s: %s (last recorded at %s)", AtStamp(at), m, AtStamp(res.Snap.Time))
		}
		return nil, fmt.Errorf("the node's record lacks %s: it falls in a gap (last recorded at %s)", AtStamp(at), AtStamp(res.Snap.Time))
	}
	// A record whose last moment names this node is this node's under
	// an older name (a renamed host), as RecordHistory judges it.
	if otherNode(res.Snap.Node, self) {
		if last, _ := lastNode(rd); otherNode(last, self) {
			return nil, fmt.Errorf("the record in %s is of node %s at %s, not of this node (%s): is --history another node's directory?", dir, res.Snap.Node, AtStamp(at), strings.Join(self, " or "))
		}
	}
	b, err := report.MarshalSnapshot(res.Snap, false)
	if err != nil {
		return nil, fmt.Errorf("the node's record at %s: %w", AtStamp(at), err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	return b, nil
}

// holding is the stretch of missing that holds at: the lost end of a
// damaged last segment (From == To) holds every moment from From on.
func holding(missing []history.Missing, at time.Time) (history.Missing, bool) {
	for _, m := range missing {
		if !at.Before(m.From) && (m.To.Equal(m.From) || !at.After(m.To)) {
			return m, true
		}
	}
	return history.Missing{}, false
}

// lastNode is the node rd's last moment names, and that moment ("" where
// it cannot be read: no other node's, by otherNode).
func lastNode(rd *history.Reader) (string, time.Time) {
	if _, to, err := rd.Span(); err == nil {
		if res, err := rd.At(to); err == nil {
			return res.Snap.Node, to
		}
	}
	return "", time.Time{}
}

// otherNode reports whether a record's node name is none of self, the
// names the answering node goes by (an unnamed record, or no self, is
// not another node's).
func otherNode(recorded string, self []string) bool {
	return recorded != "" && len(self) > 0 && !slices.Contains(self, recorded)
}

// RecordHistory is a node's answer to `history --json` over SSH (fgtop
// fleet history): the fgtop.history/v1 document its own record (the
// history directory dir) gives for f, as `fgtop history --json` prints
// it. What the record lacks of the span comes back as the error beside
// the document, which the node says on stderr. self are the names the
// node that answers goes by (none takes any): a record whose last moment
// names another node is refused, as RecordAt refuses it.
func RecordHistory(dir string, self []string, f history.Filter) ([]byte, error) {
	rd, err := history.OpenReader(dir)
	if err != nil {
		return nil, fmt.Errorf("the node's record: %w", err)
	}
	if len(self) > 0 {
		if node, to := lastNode(rd); otherNode(node, self) {
			return nil, fmt.Errorf("the record in %s is of node %s (last recorded at %s), not of this node (%s): is --history another node's directory?", dir, node, AtStamp(to), strings.Join(self, " or "))
		}
	}
	// Names as the console shows them (GPU1, MIG 7/0, a prefix), and a
	// name the record does not know is an error listing what it does, as
	// `fgtop history` answers: never an empty answer for a typo.
	res, err := rd.Query(f)
	if err != nil {
		return nil, fmt.Errorf("the node's record: %w", err)
	}
	var buf bytes.Buffer
	// The node's own clock, as its `fgtop history` reads it: a recorder
	// that holds the directory but has stopped writing is said here too.
	problems, err := histtext.Write(&buf, res, f, histtext.Options{JSON: true, Active: rd.Active, Now: time.Now()})
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return buf.Bytes(), errors.New(strings.Join(problems, "; "))
	}
	return buf.Bytes(), nil
}

// SnapshotAtSSH asks one node for its snapshot at at, from its own record
// (`snapshot --at TIME --json` over the SSH exec the fleet follows nodes
// with). The answer is bounded as the stream is: one line of at most
// MaxStreamLine bytes, at most MaxNodeDevices devices, within ctx.
func SnapshotAtSSH(ctx context.Context, addr string, cfg *gossh.ClientConfig, o SSHOptions, at time.Time) (*model.Snapshot, error) {
	o = o.withDefaults()
	line, err := execLine(ctx, addr, cfg, o, "snapshot --at "+at.UTC().Format(time.RFC3339Nano)+" --json")
	if err != nil {
		return nil, err
	}
	doc, hb, err := report.ParseLine(line)
	if err != nil || hb != nil {
		return nil, fmt.Errorf("bad answer from the node: %w", cmpErr(err, errors.New("a heartbeat, not a snapshot")))
	}
	if len(doc.Devices) > MaxNodeDevices {
		return nil, &TooLargeError{Devices: len(doc.Devices)}
	}
	snap, err := doc.Model()
	if err != nil {
		return nil, fmt.Errorf("bad snapshot from the node: %w", err)
	}
	return snap, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// HostsAt asks every node for its snapshot at at, all at once, and
// returns the fleet then: a node that answered from its record is live
// (last seen at the record's moment); one that could not answer, or
// whose record lacks the moment, is unreachable with its words, "no data
// at TIME: ...", without figures.
func HostsAt(ctx context.Context, hosts []string, cfg *gossh.ClientConfig, o SSHOptions, at time.Time) *Fleet {
	f := &Fleet{Seq: 1, Time: at, Nodes: make([]Node, len(hosts))}
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := Node{Addr: h, Name: h, Source: "ssh"}
			snap, err := SnapshotAtSSH(ctx, h, cfg, o, at)
			if err != nil {
				n.State, n.Reason = Unreachable, NoDataAt(at)+": "+untrusted.Text(err.Error())
			} else {
				n.State, n.Snap, n.Sum, n.LastSeen, n.Updated = Live, snap, Summarize(snap, o.Settings), snap.Time, snap.Time
				if snap.Node != "" {
					n.Name = untrusted.Text(snap.Node)
				}
			}
			f.Nodes[i] = n
		}()
	}
	wg.Wait()
	// As the live fleet does: two addresses answering with one node's
	// record are marked, not shown as two nodes.
	markTwins(f.Nodes)
	return f
}

// execLine runs cmd on the node and reads the one line it answers; the
// node's refusal on stderr is the error.
func execLine(ctx context.Context, addr string, cfg *gossh.ClientConfig, o SSHOptions, cmd string) ([]byte, error) {
	// ctx bounds the answer (fleet --timeout): a record's seek may take
	// longer than a stream's silence.
	rc, err := startCmd(ctx, addr, cfg, o, cmd)
	if err != nil {
		return nil, err
	}
	defer rc.close()
	line, err := readLine(bufio.NewReaderSize(rc.out, 64<<10), MaxStreamLine)
	if err != nil && !errors.Is(err, io.EOF) {
		// A line too long, or a broken connection: never wait on a node
		// that keeps writing.
		return nil, fmt.Errorf("read: %w", err)
	}
	if err != nil {
		// The refusal may follow the end of stdout: wait for the exit.
		_ = rc.sess.Wait()
		switch {
		case ctx.Err() != nil:
			return nil, unanswered(ctx, -1)
		case rc.stderr.String() != "":
			return nil, errors.New(strings.TrimSpace(rc.stderr.String()))
		case errors.Is(err, io.EOF):
			return nil, errors.New("the node closed the session without an answer")
		}
		return nil, fmt.Errorf("read: %w", err)
	}
	return line, nil
}

// remoteCmd is a command running on a node over a connection of its own.
type remoteCmd struct {
	sess *gossh.Session
	out  io.Reader
	// stderr is what the node says beside the answer (its refusals),
	// bounded.
	stderr limitedBuffer
	// close ends the connection, as the end of ctx does; it may be called
	// more than once, from any goroutine.
	close func()
}

// startCmd dials the node and starts cmd there, its stdout a pipe and its
// stderr kept (bounded); the connection ends at rc.close or with ctx.
func startCmd(ctx context.Context, addr string, cfg *gossh.ClientConfig, o SSHOptions, cmd string) (*remoteCmd, error) {
	client, err := dialNode(ctx, addr, cfg, o)
	if err != nil {
		return nil, err
	}
	var closeOnce sync.Once
	closeAll := func() { closeOnce.Do(func() { _ = client.Close() }) }
	stop := context.AfterFunc(ctx, closeAll)
	rc := &remoteCmd{close: func() { stop(); closeAll() }}
	fail := func(err error) (*remoteCmd, error) {
		rc.close()
		return nil, err
	}
	if rc.sess, err = client.NewSession(); err != nil {
		return fail(fmt.Errorf("ssh session: %w", err))
	}
	if rc.out, err = rc.sess.StdoutPipe(); err != nil {
		return fail(fmt.Errorf("ssh session: %w", err))
	}
	rc.sess.Stderr = &rc.stderr
	if err := rc.sess.Start(cmd); err != nil {
		return fail(fmt.Errorf("ssh exec: %w", err))
	}
	return rc, nil
}

// dialNode connects and logs in to a node, within o.DialTimeout and ctx.
func dialNode(ctx context.Context, addr string, cfg *gossh.ClientConfig, o SSHOptions) (*gossh.Client, error) {
	d := net.Dialer{Timeout: o.DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, dialErr(err, o.KnownHosts)
	}
	_ = conn.SetDeadline(time.Now().Add(o.DialTimeout))
	// A node that stalls the handshake does not hold the fleet past ctx.
	stopHandshake := context.AfterFunc(ctx, func() { _ = conn.Close() })
	// Whether the node said anything tells a stopped process (the
	// kernel accepts for it, nothing answers) from one that stalls later.
	heard := &heardConn{Conn: conn}
	if o.handshake != nil {
		o.handshake(addr, heard)
	}
	cc, chans, reqs, err := gossh.NewClientConn(heard, addr, cfg)
	stopHandshake()
	if err != nil {
		_ = conn.Close()
		var he *HostKeyError
		if errors.As(err, &he) {
			return nil, he
		}
		if cerr := ctx.Err(); cerr != nil {
			// ctx closed the connection under the handshake: the
			// library only saw a closed connection.
			return nil, handshakeCut(cerr, heard.n.Load() > 0, heard.first())
		}
		return nil, handshakeErr(err, o, heard.n.Load() > 0, heard.first())
	}
	_ = conn.SetDeadline(time.Time{})
	if o.handshake != nil {
		// A failed one stays: its error marks the node, unless the
		// run's end cut it short, and then it says how far it got.
		o.handshake(addr, nil)
	}
	return gossh.NewClient(cc, chans, reqs), nil
}

// heardConn counts what the node sent during the handshake, and keeps its
// first bytes (what a service that is not SSH said).
type heardConn struct {
	net.Conn
	n  atomic.Int64
	mu sync.Mutex
	// start is the first maxHeardKept bytes read.
	start []byte
}

// maxHeardKept is how much of what a node sent first is kept: a line.
const maxHeardKept = 80

func (c *heardConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	c.mu.Lock()
	if k := min(n, maxHeardKept-len(c.start)); k > 0 {
		c.start = append(c.start, p[:k]...)
	}
	c.mu.Unlock()
	return n, err
}

// first is what the node sent first (at most maxHeardKept bytes).
func (c *heardConn) first() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.start)
}
