#include "common/thread_role.h"

#include <cerrno>
#include <cstdint>
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

namespace {

// The kernel's sched_setattr(2) argument (linux/sched/types.h, which
// clashes with glibc's sched_param).
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
};

}  // namespace

bool SetThreadSlice(int us) {
  const auto tid = static_cast<pid_t>(syscall(SYS_gettid));
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  if (nice == -1 && errno != 0) return false;
  SchedAttr attr{};
  attr.size = sizeof(attr);
  attr.sched_policy = 0;                                  // SCHED_OTHER
  attr.sched_nice = nice;                                 // sched_setattr sets it too: keep the thread's own
  attr.sched_runtime = static_cast<uint64_t>(us) * 1000;  // the slice, in ns
  return syscall(SYS_sched_setattr, tid, &attr, 0) == 0;
}

}  // namespace ring
