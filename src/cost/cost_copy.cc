#include "cost/cost_copy.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "collage/sdk/errors.h"
#include "cost/postgres_url.h"
#include "cost/sqlite_cost_database.h"

namespace collage {

namespace {

// The rows that are not a backend's kernel (cost/cost_model.cc): their version names the
// libraries on each side of an arrow ("oneDNN 3.4 -> collage"); a step in a run, its backend's.
bool IsBetweenLibraries(const std::string& backend) {
  return backend == "layout-conversion" || backend == "library-switch";
}

std::vector<std::string> SidesOf(const std::string& version) {
  static constexpr char kArrow[] = " -> ";
  std::vector<std::string> sides;
  size_t start = 0;
  for (size_t arrow; (arrow = version.find(kArrow, start)) != std::string::npos;
       start = arrow + sizeof(kArrow) - 1) {
    sides.push_back(version.substr(start, arrow - start));
  }
  sides.push_back(version.substr(start));
  return sides;
}

}  // namespace

StatusOr<std::unique_ptr<CostDatabase>> OpenNamedCostDatabase(const std::string& named,
                                                              NamedUse use) {
  const std::string location = named.empty() ? CostDatabase::DefaultPath() : named;
  if (CostDatabase::IsPostgresLocation(location)) return CostDatabase::Open(location, nullptr);
  struct stat st {};
  if (::stat(location.c_str(), &st) != 0) {
    if (use == NamedUse::kRead || errno != ENOENT) {
      return InvalidArgument("cost database {}: {}", location, std::strerror(errno));
    }
  }
  std::vector<std::string> warnings;
  COLLAGE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqliteCostDatabase> sqlite,
      SqliteCostDatabase::Open(location, &warnings, CostDatabase::kDefaultLockTimeoutMs,
                               SqliteCostDatabase::OnDamage::kRefuse));
  // The one warning a refusing open leaves is a database opened read-only.
  if (!warnings.empty() && use == NamedUse::kWrite) {
    return InvalidArgument("{}: nothing was copied", warnings.front());
  }
  return std::unique_ptr<CostDatabase>(std::move(sqlite));
}

std::string ShownCostDatabase(const std::string& location) {
  return location.empty() ? CostDatabase::DefaultPath() : RedactPassword(location);
}

RowFit FitOf(const CostKey& key, const std::string& device,
             const std::vector<LibraryVersion>& libraries) {
  if (key.device != device) return RowFit::kOtherDevice;
  std::set<std::string> versions = {"collage"};  // a plain layout's side of a conversion
  for (const LibraryVersion& library : libraries) versions.insert(library.version);
  if (IsBetweenLibraries(key.backend)) {
    for (const std::string& side : SidesOf(key.backend_version)) {
      if (versions.count(side) == 0) return RowFit::kOtherVersion;
    }
    return RowFit::kFits;
  }
  if (key.backend == "step-in-run") {
    return versions.count(key.backend_version) != 0 ? RowFit::kFits : RowFit::kOtherVersion;
  }
  for (const LibraryVersion& library : libraries) {
    if (library.backend == key.backend && library.version == key.backend_version)
      return RowFit::kFits;
  }
  return RowFit::kOtherVersion;
}

StatusOr<CostCopyCounts> CopyCosts(const std::vector<std::string>& sources,
                                   const std::string& destination, const std::string& device,
                                   const std::vector<LibraryVersion>& libraries) {
  if (sources.empty()) return InvalidArgument("no cost database to copy from");
  CostCopyCounts counts;
  // Every source read to the end first: one that fails leaves the destination untouched.
  std::vector<StoredCost> rows;
  for (const std::string& source : sources) {
    COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<CostDatabase> from,
                             OpenNamedCostDatabase(source, NamedUse::kRead));
    COLLAGE_RETURN_IF_ERROR(from->ForEachRow([&](const StoredCost& row) {
      ++counts.read;
      switch (FitOf(row.key, device, libraries)) {
        case RowFit::kOtherDevice:
          ++counts.other_devices;
          break;
        case RowFit::kOtherVersion:
          ++counts.other_versions;
          break;
        case RowFit::kFits:
          rows.push_back(row);
          break;
      }
      return Status();
    }));
  }
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<CostDatabase> into,
                           OpenNamedCostDatabase(destination, NamedUse::kWrite));
  for (const StoredCost& row : rows) {
    COLLAGE_ASSIGN_OR_RETURN(bool stored, into->PutRow(row));
    ++(stored ? counts.copied : counts.kept);
  }
  return counts;
}

StatusOr<CostStats> ReadCostStats(const std::string& location, int recent) {
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<CostDatabase> database,
                           OpenNamedCostDatabase(location, NamedUse::kRead));
  return database->Stats(recent);
}

}  // namespace collage
