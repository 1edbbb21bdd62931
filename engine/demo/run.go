package demo

import (
	"context"
	"time"
)

// RestartSaid restarts the agents whose restart is pending (Restart) and
// says which, as the console's R reports it (RestartedText).
func (n *Node) RestartSaid() (string, error) {
	ids, err := n.Restart()
	return RestartedText(ids), err
}

// Until is ctx, also done once the node's simulated agents stop (Done):
// what shows the node ends with it. Call cancel when done.
func (n *Node) Until(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-n.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// RestartAfter restarts the agents whose restart has been pending for
// after (--restart-after) until ctx is done or the node stops, and says
// through say which it restarted, or why it could not.
func (n *Node) RestartAfter(ctx context.Context, after time.Duration, say func(string)) {
	t := time.NewTicker(max(min(after/4, time.Second), 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.Done():
			return
		case <-t.C:
		}
		since := n.PendingSince()
		if since.IsZero() || time.Since(since) < after {
			continue
		}
		text, err := n.RestartSaid()
		if err != nil {
			say(err.Error())
			continue
		}
		say(text)
	}
}
