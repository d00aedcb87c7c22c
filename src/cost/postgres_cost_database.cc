#include "cost/postgres_cost_database.h"

#include "collage/sdk/errors.h"

namespace collage {

StatusOr<std::unique_ptr<CostDatabase>> PostgresCostDatabase::Open(const std::string&,
                                                                   std::vector<std::string>*,
                                                                   int) {
  return Unsupported("this collage was built without PostgreSQL support");
}

}  // namespace collage
