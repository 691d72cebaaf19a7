#pragma once
// Who may open a shell's terminal, and the tickets browsers open it with
// (shells_api.cc).
#include <string_view>

#include "master/http/terminal_ws_session.h"

namespace ring {

class Accounts;
class RoutingRm;
class Store;
class TerminalTickets;

// Whether `target` is under /api/v1/shells/ and so the terminal endpoint's
// (anything else there that is no terminal answers 404 before the upgrade).
bool IsShellTerminalTarget(std::string_view target);

// The admission policy of /api/v1/shells/{id}/terminal: a bearer token, or
// without one a ticket of `tickets` in ?ticket= (used up at this check).
// `routing` (null without Slurm pools) names the job agent of a shell on a
// Slurm pool.
TerminalWsAcceptor::Admitter MakeShellTerminalAdmitter(Store& store, Accounts& accounts,
                                                       TerminalTickets& tickets,
                                                       const RoutingRm* routing = nullptr);

}  // namespace ring
