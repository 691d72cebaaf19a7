#pragma once
// Connects a pair between every two ranks of a Gloo group, through the
// group's store, such that a connection from outside the group cannot take a
// pair's place.
//
// Debian's Gloo (2022) gives every pair a listening socket on an ephemeral
// port and takes the first connection that arrives there as the peer. Any
// process on the host that connects to that port at that moment (a client
// retrying a server that has gone, a port picked by binding and closing it)
// becomes the "peer": the real peer's connect is refused, and the pair fails
// with "connection closed by peer" once the stray closes, or waits for a
// peer that never speaks. So no pair is trusted until the peer has greeted
// this rank over it, and the ranks agree through the store whether an
// attempt worked; if not, they all start again with new pairs (new
// listening ports) under the next attempt's keys.
#include <memory>

#include <gloo/context.h>
#include <gloo/transport/device.h>

#include "distributed/backend.h"

namespace ring::trial::detail {

// Every rank's pairs connected and greeted, as a context for Gloo's
// collectives. Throws RendezvousError when a rank stops reporting before the
// rendezvous deadline, or when every attempt failed (naming why).
std::shared_ptr<gloo::Context> ConnectGlooMesh(const GroupPlan& plan,
                                               const std::shared_ptr<gloo::transport::Device>& device);

}  // namespace ring::trial::detail
