// Package sshserve serves the fgtop console over SSH (wish v2): one engine
// per server, one Bubble Tea program per session, each with the size and
// colour profile of its client's terminal and its own subscription to
// snapshots.
//
// Who may connect, and with which role, is decided by an OpenSSH
// authorized_keys file: a key with the option
// environment="FGTOP_ROLE=operator" is an operator, every other key is a
// viewer. The file is reloaded when it changes; a key that is removed (or
// whose role changes) is refused from then on and its open sessions are
// closed. The role a session gets is the role of the key it authenticated
// with, looked up when the session starts (not in the auth callback, which
// runs once per key the client offers).
//
// The role shapes the console (a viewer gets the watch-mode key map) and
// is carried into the engine as an agentconfig.Actor, which the engine's
// apply and rollback paths check themselves, whatever a UI sends.
package sshserve
