#pragma once
// Rules both Store implementations share, so SqliteStore and MemoryStore cannot
// disagree on them. Pure functions, any thread.
#include <cstdint>
#include <optional>
#include <string>

#include "common/states.h"
#include "common/status.h"
#include "master/store/store.h"

namespace ring {

// limit >= 0 and offset >= 0; a limit of 0 returns no items (but the total).
Status CheckPage(int64_t limit, int64_t offset);

// The ended_at to store: the caller's value if given; else, in a terminal
// state, the earlier stored value or `now`; else empty (still running).
std::string EndedAt(bool terminal, const std::string& given, const std::string& stored,
                    const std::string& now);

// True for the states the schema's CHECK constraints accept.
bool IsKnown(RunState s);
bool IsKnown(AllocationState s);
bool IsKnown(AgentState s);

// A linked account's uid and gid are 1..4294967294: never root, never -1.
Status CheckUnixIds(const std::optional<UserUnixAccount>& account);

}  // namespace ring
