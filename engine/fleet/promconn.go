package fleet

import (
	"net"
	"net/http"
	"time"

	"github.com/fgtop/fgtop/internal/holdread"
)

// promTransport is the Prometheus client's transport: net/http's defaults,
// as the client library's, with reads held until the query is written, so
// that a port which speaks first (fgtop serve's SSH port) is worded by
// promErr, not logged over the console (package holdread).
func promTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           holdread.Dial((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
	}
}
