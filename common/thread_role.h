#pragma once
// Which threads may block. The master's io threads run the network (HTTP
// sessions, agent WebSockets) and must never wait for the disk: no SQLite
// commit, fsync or folder deletion runs there. The composition root marks
// them; the store's write path and checkpoint deletion check it, and abort
// naming what was attempted, so a test that drives such a path on an io
// thread fails at once instead of slowing everyone down.
namespace ring {

// Marks the calling thread as one of the network io threads (for its life).
void MarkIoThread();
bool OnIoThread();
// Aborts, naming `what`, when called on an io thread.
void CheckOffIoThread(const char* what);
// Raises the calling thread's nice value by `nice` (0-19): under CPU
// contention it gets a smaller share than the threads at the process's
// own. Returns false (and changes nothing) where the system refuses.
bool LowerThreadPriority(int nice);
// Asks the kernel's fair scheduler (EEVDF, Linux 6.12 and later) for time
// slices of `us` microseconds (100 to 100,000; 0: the kernel's own) for
// the calling thread and the threads it starts later: a thread with a
// shorter slice than the one running preempts it when it wakes, instead of
// waiting until that one's slice is used up. Returns false where the kernel
// does not take it (older kernels: nothing changes).
bool SetThreadSlice(int us);
// Names the calling thread (at most 15 characters), as top -H, ps -L and
// perf show it and taskset can find it (/proc/<pid>/task/<tid>/comm).
// Returns false where the system refuses.
bool SetThreadName(const char* name);

}  // namespace ring
