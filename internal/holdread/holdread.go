// Package holdread holds a client connection's reads until the client has
// written, for HTTP clients that may dial a port of another protocol.
//
// net/http's client reads a connection from the moment it is dialled. A
// server that speaks first (an SSH server's greeting, as fgtop serve's)
// could be read before the request was written: net/http then logs
// "Unsolicited response received on idle HTTP channel" to stderr, over a
// terminal console, and fails with a bare "readLoopPeekFailLocked" that
// names neither the port nor what it sent. Held until the request is
// written, the greeting reads as the request's malformed answer ("malformed
// HTTP response \"SSH-2.0-Go\""), which callers can word.
package holdread

import (
	"context"
	"net"
	"sync"
)

// DialFunc is net/http's Transport.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dial wraps dial so that every connection it makes holds its reads.
func Dial(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return Conn(c), nil
	}
}

// Conn holds c's reads until its first Write or Close. HTTP/1 and TLS
// clients always speak first, so only a peer that speaks unasked is held
// back, until there is a request its bytes can answer.
func Conn(c net.Conn) net.Conn {
	return &conn{Conn: c, wrote: make(chan struct{})}
}

type conn struct {
	net.Conn
	wrote chan struct{}
	once  sync.Once
}

func (c *conn) open() { c.once.Do(func() { close(c.wrote) }) }

func (c *conn) Read(p []byte) (int, error) {
	<-c.wrote
	return c.Conn.Read(p) //nolint:wrapcheck // the connection's own error, for net/http
}

func (c *conn) Write(p []byte) (int, error) {
	c.open()
	return c.Conn.Write(p) //nolint:wrapcheck // the connection's own error, for net/http
}

func (c *conn) Close() error {
	c.open()
	return c.Conn.Close() //nolint:wrapcheck // the connection's own error, for net/http
}
