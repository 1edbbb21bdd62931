// Package scratch finds the resource.txt file of every kernel under
// Backend.AI scratch roots, reads and parses each one (the parser is
// injected), and follows them with fsnotify, handing the engine per-kernel
// events.
//
// Layout (domain/backendai.md §1.1): a scratch root holds one directory per
// kernel, named by the kernel id in canonical UUID form (lower-case hex, as
// Python's str(uuid) writes it), and the file is
// <root>/<kernel-id>/config/resource.txt. Everything else under a root
// (<id>_tmp directories, <id>.img files, stray names) is ignored.
//
// # Reading
//
// Scan lists each root once and reads the kernels with a pool of workers
// (GOMAXPROCS by default) while the listing is still going. A file costs
// one open, one read into a pooled buffer and one close: no stat. The
// parser gets the bytes only for the duration of its call (see ParseFunc).
// BenchmarkScan10k holds this to BenchmarkReadOnly10k, a bare parallel
// open/read/close of the same 10,000 files.
//
// # Symlinks
//
// No symlink under a root is followed, whether it points inside or outside
// the root: a kernel directory, config directory or resource.txt that is a
// symlink is not read, and a Problem event names it. One that resolves
// outside the root is an error (model.IssueSymlinkEscape); one that stays
// inside is a warning with the same code. Following in-root links was
// rejected because a kernel directory linked to another kernel's directory
// would count that kernel's allocation twice, and Backend.AI itself never
// creates links there. The root path itself may be a symlink (operators do
// that with /var/lib/backend.ai): it is followed, and "outside" means
// outside the resolved root.
//
// On Linux the file is opened with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)
// relative to an open descriptor of the root, so the check and the open are
// one system call and no link can be swapped in between. Where openat2 is
// unavailable (kernels before 5.6, seccomp filters), each component is
// opened with openat(O_NOFOLLOW) from the previous one, which is as safe and
// costs two more opens per file. Other Unix systems check the directories
// with lstat and open the file with O_NOFOLLOW, which leaves a
// check-then-use window on the directories.
//
// # Events and what the engine does with them
//
//   - KernelUpdated: the file was read; Value is the parse result and Err the
//     parse (or read) error. A kernel whose file fails to parse keeps its last
//     good contribution (the engine's reliability rule).
//   - KernelPending: the kernel directory exists but resource.txt does not.
//   - KernelRemoved: the kernel directory is gone (sent after a change;
//     full scans say it with Resynced instead).
//   - RootMissing: the root does not exist (Issue set); the watcher polls for
//     its return and forgets what it knew about the root's kernels.
//   - RootRestored: a missing root is back; a full scan of it follows.
//   - Resynced: a full reconciling scan of a root finished; Present lists
//     every kernel directory seen, and the engine drops kernels of that root
//     not listed. Rescans (overflow, periodic safety net) send KernelUpdated
//     only for kernels whose file content changed (a hash of the last read
//     is kept), so Present is the only news about the others.
//   - Problem: Issue set. With Kernel set it is that kernel's current state
//     (unreadable, or a symlink), replacing any earlier issue until the next
//     event for the kernel; the kernel keeps its last good contribution.
//     Without Kernel it is about the root: it cannot be listed
//     (model.IssuePermission; its kernels keep their figures, and a Resynced
//     follows once it can be listed again), or a notice (inotify overflow,
//     watch limit: model.IssueWatch).
//
// # Watching
//
// The Watcher watches each root, each kernel's config/ directory, and a
// kernel directory until its config/ exists (directories, not files, so
// atomic-rename writers are seen). An event only marks its kernel dirty;
// after a debounce the kernel is synced from what is on disk (watches set
// or dropped, file read), so bursts, coalesced events and odd orders all
// end in the same state. At start it reads every kernel and sends that
// before it sets the kernel watches (a watch costs about as much as a
// read), then sets them and checks every kernel again, sending only what
// changed in between.
package scratch
