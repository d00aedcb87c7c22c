// `collage costs export|import|merge|stats`: moving measured costs between a user's SQLite
// file and a team's PostgreSQL database, and what a database holds. The copying and its
// checks are the library's (collage/cost_store.h); this file parses and prints.
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

#include "collage/available_backends.h"
#include "collage/cost_store.h"
#include "collage/device_fingerprint.h"
#include "collage/printable_text.h"
#include "commands.h"

namespace collage::cli {

namespace {

struct CostsFlags {
  std::string file;                  // export's destination, import's source
  std::vector<std::string> sources;  // merge's
  std::string into;                  // merge's destination
  std::string cost_db;
  int last = 10;
  std::vector<std::string> plugin_dirs;
};

bool IsUrl(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

// The libraries of this build (and of the plug-ins loaded): a copied row must have been
// measured with one of them.
std::vector<LibraryVersion> ThisBuildsLibraries() {
  std::vector<LibraryVersion> libraries;
  for (const BackendInfo& backend : AvailableBackends())
    libraries.push_back({backend.name, backend.version});
  return libraries;
}

// A database for messages: never its password.
std::string Shown(const std::string& location) {
  return PrintableText(ShownCostDatabase(location));
}

int Copy(const CostsFlags& flags, const std::vector<std::string>& sources,
         const std::string& destination, const char* verb) {
  if (Status s = LoadPlugins(flags.plugin_dirs); !s.ok()) return ReportError(s);
  StatusOr<CostCopyCounts> counts =
      CopyCosts(sources, destination, DeviceFingerprint(), ThisBuildsLibraries());
  if (!counts.ok()) return ReportError(counts.status());
  std::string from;
  for (const std::string& source : sources) from += (from.empty() ? "" : ", ") + Shown(source);
  std::printf("%s %lld rows from %s into %s (%lld already there as new or newer)\n", verb,
              static_cast<long long>(counts->copied), from.c_str(), Shown(destination).c_str(),
              static_cast<long long>(counts->kept));
  std::printf("refused %lld rows of other devices, %lld of other library versions\n",
              static_cast<long long>(counts->other_devices),
              static_cast<long long>(counts->other_versions));
  return 0;
}

std::string Date(int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M", &tm);
  return text;
}

int Stats(const CostsFlags& flags) {
  const std::string location = CostDbLocation(flags.cost_db);
  StatusOr<CostStats> stats = ReadCostStats(location, flags.last);
  if (!stats.ok()) return ReportError(stats.status());
  std::printf("cost database: %s\n", Shown(location).c_str());
  // Per device, then per backend and version under it.
  std::string device;
  for (size_t i = 0; i < stats->rows.size(); ++i) {
    const CostStats::Rows& rows = stats->rows[i];
    if (i == 0 || rows.device != device) {
      device = rows.device;
      int64_t valid = 0, invalid = 0;
      for (const CostStats::Rows& same : stats->rows) {
        if (same.device != device) continue;
        valid += same.valid;
        invalid += same.invalid;
      }
      std::printf("device %s: %lld rows (%lld valid, %lld invalid)\n",
                  PrintableText(device).c_str(), static_cast<long long>(valid) + static_cast<long long>(invalid),
                  static_cast<long long>(valid), static_cast<long long>(invalid));
    }
    std::printf("  %-18s %-40s %6lld valid %6lld invalid\n", PrintableText(rows.backend).c_str(),
                PrintableText(rows.backend_version).c_str(), static_cast<long long>(rows.valid),
                static_cast<long long>(rows.invalid));
  }
  if (stats->rows.empty()) std::printf("no costs measured yet\n");
  std::printf("claims in flight: %lld\n", static_cast<long long>(stats->claims));
  if (stats->recent_optimizes.empty()) {
    std::printf("no optimize recorded yet\n");
    return 0;
  }
  std::printf("last optimizes (candidates measured now / found in the database):\n");
  for (const OptimizeRun& run : stats->recent_optimizes) {
    const int resolved = run.candidates_measured + run.candidates_found;
    std::printf("  %s  %-24s %4d distinct, %4d measured, %4d found (hit rate %.0f%%)  %s\n",
                Date(run.finished_at).c_str(), PrintableText(run.model).c_str(),
                run.distinct_candidates, run.candidates_measured, run.candidates_found,
                resolved > 0 ? 100.0 * run.candidates_found / resolved : 0.0,
                PrintableText(run.machine).c_str());
  }
  return 0;
}

}  // namespace

void AddCostsCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<CostsFlags>();
  CLI::App* costs = app.add_subcommand(
      "costs",
      "Copy measured costs between cost databases (SQLite files, a team's PostgreSQL "
      "database) and show what one holds");
  costs->require_subcommand(1);
  const std::string db_help =
      "Cost database: a SQLite file or postgresql://…; default: $COLLAGE_COST_DB, else "
      "~/.cache/collage/costs.sqlite";

  CLI::App* exported = costs->add_subcommand(
      "export", "Write this machine's costs into a SQLite file (created, or a collage cost "
                "database merged into)");
  exported->add_option("file", flags->file, "The SQLite file to write")->required();
  exported->add_option("--cost-db", flags->cost_db, db_help + " (read)");
  AddPluginOption(exported, flags->plugin_dirs);
  exported->callback([flags, &exit_code] {
    if (IsUrl(flags->file)) {
      exit_code = ReportError(InvalidArgument(
          "export writes a SQLite file: to copy into a PostgreSQL database, use `collage costs "
          "merge SRC --into postgresql://…`"));
      return;
    }
    exit_code = Copy(*flags, {CostDbLocation(flags->cost_db)}, flags->file, "exported");
  });

  CLI::App* imported = costs->add_subcommand(
      "import", "Add the costs of a SQLite file (another machine's export) to the cost database");
  imported->add_option("file", flags->file, "The SQLite file to read")->required();
  imported->add_option("--cost-db", flags->cost_db, db_help + " (written)");
  AddPluginOption(imported, flags->plugin_dirs);
  imported->callback([flags, &exit_code] {
    exit_code = Copy(*flags, {flags->file}, CostDbLocation(flags->cost_db), "imported");
  });

  CLI::App* merged = costs->add_subcommand(
      "merge", "Copy the costs of several databases into one, the newer row of a key kept");
  merged->add_option("sources", flags->sources, "Databases to read (files or URLs)")->required();
  merged->add_option("--into", flags->into, "The database to write (file or URL)")->required();
  AddPluginOption(merged, flags->plugin_dirs);
  merged->callback(
      [flags, &exit_code] { exit_code = Copy(*flags, flags->sources, flags->into, "merged"); });

  CLI::App* stats = costs->add_subcommand(
      "stats", "Rows per device, backend and version, claims in flight, and the last optimizes "
               "with their hit rate");
  stats->add_option("--cost-db", flags->cost_db, db_help);
  stats->add_option("--last", flags->last, "Optimizes to list")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  stats->callback([flags, &exit_code] { exit_code = Stats(*flags); });
}

}  // namespace collage::cli
