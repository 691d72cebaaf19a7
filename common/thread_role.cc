#include "common/thread_role.h"

#include <cstdio>
#include <cstdlib>

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

}  // namespace ring
