#include "cost/cost_database.h"

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "collage/sdk/errors.h"
#include "collage/sdk/graph.h"
#include "cost/postgres_cost_database.h"
#include "cost/sqlite_cost_database.h"

namespace collage {

namespace fs = std::filesystem;

std::string CostDatabase::DefaultPath() {
  auto nonempty = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v != nullptr && v[0] != '\0' ? v : nullptr;
  };
  if (const char* dir = nonempty("COLLAGE_CACHE_DIR"))
    return (fs::path(dir) / "costs.sqlite").string();
  if (const char* xdg = nonempty("XDG_CACHE_HOME"))
    return (fs::path(xdg) / "collage" / "costs.sqlite").string();
  if (const char* home = nonempty("HOME"))
    return (fs::path(home) / ".cache" / "collage" / "costs.sqlite").string();
  return "collage-costs.sqlite";
}

bool CostDatabase::IsPostgresLocation(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

StatusOr<std::unique_ptr<CostDatabase>> CostDatabase::Open(const std::string& location,
                                                           std::vector<std::string>* warnings,
                                                           int lock_timeout_ms) {
  if (IsPostgresLocation(location)) {
    return PostgresCostDatabase::Open(location, warnings, lock_timeout_ms);
  }
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<SqliteCostDatabase> sqlite,
                           SqliteCostDatabase::Open(location, warnings, lock_timeout_ms));
  return std::unique_ptr<CostDatabase>(std::move(sqlite));
}

StatusOr<std::optional<CostRecord>> CostDatabase::Find(const CostKey& key, double time_limit_s) {
  COLLAGE_ASSIGN_OR_RETURN(CostLookup lookup, Lookup(key, time_limit_s));
  return std::move(lookup.record);
}

Status CostDatabase::MarkMeasuring(const CostKey& key, bool in_this_process) {
  return Claim(key, in_this_process).status();
}

std::string LayoutToText(const Layout& layout) {
  if (layout.kind() == LayoutKind::kOpaque) {
    // The byte count of an opaque layout does not depend on the type asked for.
    return fmt::format("opaque:{}:{}", layout.BufferBytes(TensorType{}), layout.name());
  }
  return layout.name();
}

StatusOr<Layout> LayoutFromText(const std::string& text) {
  if (text == Layout::Plain().name()) return Layout::Plain();
  if (text == Layout::ChannelsLast().name()) return Layout::ChannelsLast();
  if (text.rfind("opaque:", 0) == 0) {
    size_t colon = text.find(':', 7);
    if (colon != std::string::npos && colon > 7 && colon + 1 < text.size()) {
      char* end = nullptr;
      unsigned long long bytes = std::strtoull(text.c_str() + 7, &end, 10);
      // The rest is the layout's name, "<owner>:<format>"; a backend's name has no ':'.
      size_t owner_end = text.find(':', colon + 1);
      if (end == text.c_str() + colon && owner_end != std::string::npos && owner_end > colon + 1) {
        return Layout::Opaque(text.substr(colon + 1, owner_end - colon - 1),
                              text.substr(owner_end + 1), bytes);
      }
    }
  }
  return InvalidArgument("'{}' is not a layout", text);
}

std::string LayoutsToJson(const CostRecord& record) {
  nlohmann::json j;
  j["inputs"] = nlohmann::json::array();
  j["outputs"] = nlohmann::json::array();
  for (const Layout& l : record.input_layouts) j["inputs"].push_back(LayoutToText(l));
  for (const Layout& l : record.output_layouts) j["outputs"].push_back(LayoutToText(l));
  return j.dump();
}

bool LayoutsFromJson(const std::string& text, CostRecord& record) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("inputs") || !j.contains("outputs")) return false;
  for (const char* side : {"inputs", "outputs"}) {
    const nlohmann::json& list = j[side];
    if (!list.is_array()) return false;
    for (const nlohmann::json& item : list) {
      if (!item.is_string()) return false;
      auto layout = LayoutFromText(item.get<std::string>());
      if (!layout.ok()) return false;
      (std::string(side) == "inputs" ? record.input_layouts : record.output_layouts)
          .push_back(*layout);
    }
  }
  return true;
}

bool PlausibleMilliseconds(double value) {
  constexpr double kMaxPlausibleMs = 1e7;  // nearly three hours for one kernel
  return value >= 0 && value < kMaxPlausibleMs;
}

}  // namespace collage
