// The cost database in PostgreSQL (cost/cost_database.h): one database that a team's
// machines share, so that a candidate measured on one machine prices the plans of every
// machine with the same device fingerprint and library versions. Same rows, same key and the
// same judgment of what is read as the SQLite store (cost/cost_row.h); a claim also names its
// machine (ThisMachineIdentity) and holds a lease in the server's clock: a claim of this
// machine lapses with its process, one of another machine when its lease runs out unrenewed
// (RenewClaims). The tables: cost/postgres_schema.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cost/cost_database.h"

namespace collage {

class PostgresCostDatabase {
 public:
  // Connects to `url` ("postgresql://…", libpq's URL syntax) and makes its schema ours
  // (creating it in an empty database). An unreachable server, a newer schema or tables
  // collage did not create are errors that name the URL without its password. A build without
  // libpq says so.
  static StatusOr<std::unique_ptr<CostDatabase>> Open(const std::string& url,
                                                      std::vector<std::string>* warnings,
                                                      int lock_timeout_ms);
};

}  // namespace collage
