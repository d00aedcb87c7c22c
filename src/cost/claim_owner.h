// Who holds a claim on a key of the cost database (cost/cost_database.h), and whether it is
// still there: a process is named by its id and its start time, since an id alone can be
// reused by a later process; a machine by its host name and boot, so that a shared database
// tells a claim of this machine (checked by its process) from another machine's (trusted
// while its lease lasts).
#pragma once

#include <cstdint>
#include <string>

namespace collage {

// The process exists (possibly another user's).
bool ProcessAlive(int64_t pid);

// "<pid>:<start time in clock ticks since boot>"; empty when the process cannot be read.
std::string ProcessIdentity(int64_t pid);

// ProcessIdentity of this process, computed once (again in a forked child).
const std::string& OwnProcessIdentity();

// The process that claimed a key is still there (not a later one with its id). An empty
// `identity` (a claim from before identities were recorded) trusts the id alone.
bool ClaimOwnerAlive(int64_t pid, const std::string& identity);

// "<host name>/<boot id>": this machine in this boot.
const std::string& ThisMachineIdentity();

}  // namespace collage
