// Package screen draws a Bubble Tea program when what it shows changed,
// not at a frame rate.
//
// Bubble Tea's own renderer wakes on a ticker (tea.WithFPS) and compares
// the last view with the newest one on every tick, so a console at rest
// still woke 20 times a second. A program made with NewProgram runs with
// Bubble Tea's renderer switched off (tea.WithoutRenderer) and its model
// wrapped: after each Update the wrapper asks the model for its view
// itself, when a frame is due, and hands the content to a drawing
// goroutine only when it differs from the last one drawn. That goroutine
// parses the lines that changed into cells, diffs the cells against the
// screen with ultraviolet's TerminalRenderer, and writes the difference in
// one write. A frame that changed most of its lines (the help opened by a
// key) is written line by line from its text instead, when every line
// can be (direct.go), and the renderer catches up after the write.
//
// Programs that often draw the same frames (serve's idle viewers) may
// share a Transitions: a frame change one of their drawers computed is
// written by the others as it is, byte for byte what they would have
// computed, since each frame ends in a canonical state (see Transitions).
//
// Timing: the user's input (a key, a paste, the mouse, a resize) that
// changes the frame is drawn at once, whenever it comes: a person waits
// on it. Other messages after a quiet spell (MinInterval since the last
// frame) are drawn at once too; those within MinInterval of a frame arm
// one timer that draws the newest state when the interval ends, so a
// burst of data costs one frame per interval. A key's frame that comes
// while the drawer is busy with a data frame is drawn next. Nothing is
// armed while nothing arrives.
//
// What Bubble Tea still does: it reads the keys, runs Update and the Cmds,
// and keeps a ticker for its own output buffer, which tea.WithFPS(1) slows
// to once a second (it cannot be stopped; it finds the buffer empty,
// because the queries the console sends are written here, and writes
// nothing). What this package took over from Bubble Tea's renderer, since
// WithoutRenderer also skips Bubble Tea's terminal setup: raw mode of a
// local terminal (and its restoring, on quit, kill, cancel and panic), the
// window size at start and on SIGWINCH, the alternate screen, the hidden
// cursor, mouse, focus and bracketed-paste modes, the window title, the
// keyboard enhancements, synchronized output and grapheme widths where
// the terminal says it knows them, colour downsampling to the terminal's
// profile, and the "\n" mapping of an SSH session's emulated pty. A panic
// in drawing ends the program (Run returns a *DrawPanicError), not the
// process. Not supported,
// because no console uses them: View's terminal colours and progress bar,
// Println above an inline program, and suspending with ^Z (tea.Suspend is
// answered with tea.ResumeMsg, as wish does over SSH).
package screen
