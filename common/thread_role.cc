#include "common/thread_role.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ring {
namespace {

thread_local bool io_thread = false;

}  // namespace

void MarkIoThread() {
  io_thread = true;
}
bool OnIoThread() {
  return io_thread;
}

void CheckOffIoThread(const char* what) {
  if (!io_thread) return;
  std::fprintf(stderr, "fatal: %s on a network io thread (it must run on the lifecycle or a worker thread)\n",
               what);
  std::abort();
}

bool LowerThreadPriority(int nice) {
  if (nice <= 0) return true;
  // On Linux a nice value belongs to a thread: PRIO_PROCESS with a thread
  // id changes that thread alone.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, tid);
  if (now == -1 && errno != 0) return false;
  return setpriority(PRIO_PROCESS, tid, now + nice) == 0;
}

}  // namespace ring
