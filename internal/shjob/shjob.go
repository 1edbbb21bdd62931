// Package shjob runs an operator's shell command (apply's --restart-cmd)
// as a shell runs a job: in a process group of its own, in the terminal's
// foreground when fgtop holds it, within a time bound, and stopped whole
// (with what it started) when the bound passes or the operator stops it.
package shjob

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"golang.org/x/sys/unix"
)

// ErrTimeout: the command ran past Options.Timeout and was stopped.
var ErrTimeout = errors.New("ran past its time and was stopped")

// ErrStopped: the context ended (SIGINT, SIGTERM) and the command was
// stopped.
var ErrStopped = errors.New("stopped by a signal")

// Options say what to run and where its output goes.
type Options struct {
	// Cmd is run with sh -c.
	Cmd string
	// Timeout bounds the run (positive); Grace is how long a stopped
	// command may take to end before it and its group are killed.
	Timeout, Grace time.Duration
	// Stdin is the operator's terminal, when it is one: the job gets
	// its foreground (a sudo asking for a password, Ctrl-C).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Run runs o.Cmd and waits for it. A command that ends by itself keeps
// what it started (an agent it ran with &); one stopped at the timeout or
// by ctx is stopped with its whole process group (SIGTERM, then SIGKILL
// after Grace): sh's children (systemctl, a sleep) outlive a signal to sh
// alone and hold its output open.
func Run(ctx context.Context, o Options) error {
	if o.Timeout <= 0 {
		return errors.New("shjob: the timeout must be positive")
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "/bin/sh", "-c", o.Cmd)
	c.Stdout, c.Stderr = o.Stdout, o.Stderr
	// In the background, a sudo asking for a password was stopped
	// (SIGTTIN) until the timeout, and Ctrl-C reached only fgtop.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	tty := foregroundTTY(o.Stdin)
	if tty >= 0 {
		c.SysProcAttr.Foreground, c.SysProcAttr.Ctty = true, tty
	}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGTERM) }
	c.WaitDelay = o.Grace
	err := c.Run()
	if tty >= 0 {
		takeForeground(tty)
	}
	if c.Process != nil && ctx.Err() != nil {
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
	switch {
	case parent.Err() != nil:
		return ErrStopped
	case ctx.Err() != nil:
		return ErrTimeout
	}
	return err
}

// foregroundTTY is the descriptor of the terminal in is when this
// process's group is that terminal's foreground one, -1 otherwise (not a
// terminal, or run in the background).
func foregroundTTY(in io.Reader) int {
	f, ok := in.(*os.File)
	if !ok || f == nil || !term.IsTerminal(f.Fd()) {
		return -1
	}
	fd := int(f.Fd())
	if pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err != nil || pg != unix.Getpgrp() {
		return -1
	}
	return fd
}

// takeForeground makes this process's group the foreground one of the
// terminal tty again, as a shell does once its job ends (SIGTTOU, which
// would stop a background group asking, ignored meanwhile).
func takeForeground(tty int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	unix.IoctlSetPointerInt(tty, unix.TIOCSPGRP, unix.Getpgrp())
}
