#pragma once
// What the examples that run PyTorch need of this machine.
namespace ring::testing {

// Whether /usr/bin/python3 imports torch with Gloo (python3-torch).
bool PythonHasTorch();

// Whether this host's name resolves to loopback addresses only: then torch's
// Gloo binds to loopback by default, else GLOO_SOCKET_IFNAME must say so.
bool HostnameIsLoopback();

}  // namespace ring::testing
