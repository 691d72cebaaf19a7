#include "tests/support/python_torch.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <climits>

#include "tests/support/process.h"

namespace ring::testing {

bool PythonHasTorch() {
  using namespace std::chrono_literals;
  auto r = RunCommand({"/usr/bin/python3", "-c",
                       "import torch.distributed as d, sys; sys.exit(0 if d.is_gloo_available() else 3)"},
                      {}, 120s);
  return r.exit_code == 0;
}

bool HostnameIsLoopback() {
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return false;
  addrinfo* found = nullptr;
  if (getaddrinfo(host, nullptr, nullptr, &found) != 0) return false;
  bool loopback = found != nullptr;
  for (addrinfo* a = found; a; a = a->ai_next) {
    if (a->ai_family == AF_INET)
      loopback &= (ntohl(reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr.s_addr) >> 24) == 127;
    else if (a->ai_family == AF_INET6)
      loopback &= IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
  }
  freeaddrinfo(found);
  return loopback;
}

}  // namespace ring::testing
