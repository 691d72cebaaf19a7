#include "common/thread_role.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <pthread.h>
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

namespace {

// The calling thread's id and nice value; false if it cannot be read. On
// Linux a nice value belongs to a thread: PRIO_PROCESS with a thread id
// reads (and sets) that thread's alone.
bool OwnNice(pid_t& tid, int& nice) {
  tid = static_cast<pid_t>(syscall(SYS_gettid));
  errno = 0;
  nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  return !(nice == -1 && errno != 0);
}

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

bool LowerThreadPriority(int nice) {
  if (nice <= 0) return true;
  pid_t tid;
  int now;
  if (!OwnNice(tid, now)) return false;
  return setpriority(PRIO_PROCESS, static_cast<id_t>(tid), now + nice) == 0;
}

bool SetThreadSlice(int us) {
  pid_t tid;
  int nice;
  if (!OwnNice(tid, nice)) return false;
  SchedAttr attr{};
  attr.size = sizeof(attr);
  attr.sched_policy = 0;                                  // SCHED_OTHER
  attr.sched_nice = nice;                                 // sched_setattr sets it too: keep the thread's own
  attr.sched_runtime = static_cast<uint64_t>(us) * 1000;  // the slice, in ns
  return syscall(SYS_sched_setattr, tid, &attr, 0) == 0;
}

bool SetThreadName(const char* name) {
  return pthread_setname_np(pthread_self(), name) == 0;
}

}  // namespace ring
