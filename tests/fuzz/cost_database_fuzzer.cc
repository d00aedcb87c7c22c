// libFuzzer target for the cost database reader fed damaged SQLite files: each input is
// written as the database file, opened with CostDatabase::Open, then read and written the
// way `collage optimize` does (Find, MarkMeasuring, Put, Count). Any file must give a working
// database or an error Status, never a crash, a leak, undefined behaviour or a hang.
//
// Invariants beyond "does not crash":
// - a file Open moves aside (it is not a readable collage cost database) keeps the input's
//   bytes exactly: the database never loses a user's file;
// - what Put stores, Find gives back (for a key no seed holds, so only this Put wrote it).
// Every file Open leaves (the database, its -wal/-shm, the moved-aside copies) is removed
// after each input, so that a long run does not fill the disk.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cost/cost_database.h"
#include "fuzz_check.h"
#include "fuzz_fixtures.h"
#include "fuzz_scratch.h"

namespace {

using collage::CostKey;
using collage::CostRecord;

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The one moved-aside copy Open made, if any ("costs.sqlite.corrupt-<time>-<pid>").
std::vector<std::filesystem::path> MovedAside(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("costs.sqlite.corrupt-", 0) == 0 && name.find("-wal") == std::string::npos &&
        name.find("-shm") == std::string::npos) {
      found.push_back(entry.path());
    }
  }
  return found;
}

bool SameRecord(const CostRecord& a, const CostRecord& b) {
  return a.valid == b.valid && a.reason == b.reason && a.median_ms == b.median_ms &&
         a.p90_ms == b.p90_ms && a.samples == b.samples && a.input_layouts == b.input_layouts &&
         a.output_layouts == b.output_layouts;
}

void Exercise(const std::string& path, const std::string& input) {
  using namespace collage;
  std::vector<std::string> warnings;
  auto db = CostDatabase::Open(path, &warnings);
  const std::vector<std::filesystem::path> moved =
      MovedAside(std::filesystem::path(path).parent_path());
  if (moved.size() > 1) fuzz::Fail("Open moved more than one file aside");
  if (!moved.empty() && ReadAll(moved[0]) != input) {
    fuzz::Fail("the moved-aside file does not hold the input's bytes", moved[0].string());
  }
  if (!moved.empty() && warnings.empty()) fuzz::Fail("Open moved the file aside without a warning");
  if (!db.ok()) {
    fuzz::CheckNotInternal("CostDatabase::Open", db.status());
    return;
  }
  CostDatabase& database = **db;
  for (const char* signature : {"conv", "relu", "measuring"}) {
    auto found = database.Find(fuzz::SeedCostKey(signature));
    if (!found.ok()) fuzz::CheckNotInternal("Find", found.status());
  }
  auto count = database.Count();
  if (!count.ok()) fuzz::CheckNotInternal("Count", count.status());

  const CostKey fresh{"fuzz-device", "onednn", "2.6", "fuzz-only-key", 2};
  Status marked = database.MarkMeasuring(fresh, /*in_this_process=*/false);
  if (!marked.ok()) fuzz::CheckNotInternal("MarkMeasuring", marked);
  CostRecord record;
  record.valid = true;
  record.reason = "fuzzed";
  record.median_ms = 0.25;
  record.p90_ms = 0.5;
  record.samples = 7;
  record.input_layouts = {Layout::Plain(), Layout::ChannelsLast()};
  record.output_layouts = {Layout::Plain()};
  Status put = database.Put(fresh, record);
  if (!put.ok()) {
    fuzz::CheckNotInternal("Put", put);
    return;
  }
  auto back = database.Find(fresh);
  if (!back.ok()) fuzz::Fail("Find after a successful Put", back.status().ToString());
  if (!back->has_value() || !SameRecord(**back, record))
    fuzz::Fail("Find gave another record than Put stored");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const collage::fuzz::ScratchDir& scratch = collage::fuzz::ScratchDir::Get();
  scratch.Clear();
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string path = scratch.Write("costs.sqlite", data, size);
  Exercise(path, input);
  scratch.Clear();
  return 0;
}
