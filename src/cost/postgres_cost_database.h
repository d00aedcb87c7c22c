// The cost database in PostgreSQL (cost/cost_database.h): one database that a team's
// machines share, so that a candidate measured on one machine prices the plans of every
// machine with the same device fingerprint and library versions. Placeholder until the
// libpq store lands: opening one says this build cannot.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cost/cost_database.h"

namespace collage {

class PostgresCostDatabase {
 public:
  static StatusOr<std::unique_ptr<CostDatabase>> Open(const std::string& url,
                                                      std::vector<std::string>* warnings,
                                                      int lock_timeout_ms);
};

}  // namespace collage
