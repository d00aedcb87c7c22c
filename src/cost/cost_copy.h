// What `collage costs` builds on (the API is collage/cost_store.h): opening a database a user
// named, as it is, and deciding which rows of another database price plans here.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/cost_store.h"
#include "cost/cost_database.h"

namespace collage {

// Opens the database at `location` (a PostgreSQL URL or a SQLite file) for copying or
// inspecting: a file is never moved aside (a damaged or foreign one is an error, left as it
// is). To read, a missing file is an error (never an empty new database) and a read-only one
// is fine; to write, a missing file is created and a read-only one is an error.
enum class NamedUse { kRead, kWrite };
StatusOr<std::unique_ptr<CostDatabase>> OpenNamedCostDatabase(const std::string& location,
                                                              NamedUse use);

// Whether a row measured under `key` prices plans of a build with `libraries` on `device`.
enum class RowFit { kFits, kOtherDevice, kOtherVersion };
RowFit FitOf(const CostKey& key, const std::string& device,
             const std::vector<LibraryVersion>& libraries);

}  // namespace collage
