// Copying costs between databases (collage/cost_store.h) with SQLite files: only this device's
// rows of this build's library versions travel, the newer row of a key wins, claims stay
// behind, and a source that is not a collage cost database is an error that leaves the
// destination as it was. Also the URL handling the PostgreSQL store shows users.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "collage/cost_store.h"
#include "cost/cost_copy.h"
#include "cost/cost_database.h"
#include "cost/postgres_url.h"

namespace collage {
namespace {

namespace fs = std::filesystem;

const std::vector<LibraryVersion> kLibraries = {{"onednn", "oneDNN 2.6.3"},
                                                {"native", "collage 3"}};

CostKey Key(const std::string& signature, const std::string& device = "dev",
            const std::string& backend = "onednn", const std::string& version = "oneDNN 2.6.3") {
  return CostKey{device, backend, version, signature, 1, "warm"};
}

CostRecord Valid(double ms) {
  CostRecord r;
  r.valid = true;
  r.median_ms = ms;
  r.p90_ms = ms;
  r.samples = 3;
  r.input_layouts = {Layout::Plain()};
  r.output_layouts = {Layout::Plain()};
  return r;
}

TEST(CostRowFitTest, OnlyThisDeviceAndThisBuildsLibrariesFit) {
  EXPECT_EQ(FitOf(Key("s"), "dev", kLibraries), RowFit::kFits);
  EXPECT_EQ(FitOf(Key("s", "laptop"), "dev", kLibraries), RowFit::kOtherDevice);
  EXPECT_EQ(FitOf(Key("s", "dev", "onednn", "oneDNN 3.0"), "dev", kLibraries),
            RowFit::kOtherVersion);
  EXPECT_EQ(FitOf(Key("s", "dev", "mystery", "oneDNN 2.6.3"), "dev", kLibraries),
            RowFit::kOtherVersion)
      << "a version this build has, under a backend it does not";
  // Conversions and switches name a library on each side; a plain layout's side is collage.
  EXPECT_EQ(FitOf(Key("s", "dev", "layout-conversion", "oneDNN 2.6.3 -> collage"), "dev",
                  kLibraries),
            RowFit::kFits);
  EXPECT_EQ(FitOf(Key("s", "dev", "library-switch", "collage 3 -> oneDNN 3.0"), "dev",
                  kLibraries),
            RowFit::kOtherVersion);
  EXPECT_EQ(FitOf(Key("s", "dev", "step-in-run", "collage 3"), "dev", kLibraries),
            RowFit::kFits);
}

TEST(PostgresUrlTest, ThePasswordIsNeverShown) {
  EXPECT_EQ(RedactPassword("postgresql://alice:s3cret@db.example:5432/costs"),
            "postgresql://alice:***@db.example:5432/costs");
  EXPECT_EQ(RedactPassword("postgresql://alice@db/costs?password=s3cret&sslmode=require"),
            "postgresql://alice@db/costs?password=***&sslmode=require");
  EXPECT_EQ(RedactPassword("postgresql:///costs?host=/tmp/x"), "postgresql:///costs?host=/tmp/x");
  EXPECT_EQ(RedactPassword("postgres://a:b@c@host/db"), "postgres://a:***@host/db");
  EXPECT_EQ(WithConnectTimeout("postgresql://h/db", 10), "postgresql://h/db?connect_timeout=10");
  EXPECT_EQ(WithConnectTimeout("postgresql://h/db?user=a", 10),
            "postgresql://h/db?user=a&connect_timeout=10");
  EXPECT_EQ(WithConnectTimeout("postgresql://h/db?connect_timeout=3", 10),
            "postgresql://h/db?connect_timeout=3");
}

class CostCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("collage-costcopy-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    still_measuring_.clear();
    fs::remove_all(dir_);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Write(const std::string& path, const std::vector<StoredCost>& rows, bool claim = false) {
    auto db = CostDatabase::Open(path, nullptr);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    for (const StoredCost& row : rows) ASSERT_TRUE(*(*db)->PutRow(row));
    if (claim) {
      ASSERT_TRUE((*db)->Claim(Key("in flight"), false).ok());
      // Closing would remove the claim: kept open to the end of the test, as by a process
      // still measuring.
      still_measuring_.push_back(std::move(*db));
    }
  }
  static std::string Bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  fs::path dir_;
  std::vector<std::unique_ptr<CostDatabase>> still_measuring_;
};

TEST_F(CostCopyTest, CopiesThisMachinesRowsKeepingTheNewer) {
  Write(Path("a.sqlite"), {{Key("one"), Valid(1), 100, 0},
                           {Key("two"), Valid(2), 100, 0},
                           {Key("laptop", "laptop"), Valid(3), 100, 0},
                           {Key("old lib", "dev", "onednn", "oneDNN 1.0"), Valid(4), 100, 0}},
        /*claim=*/true);
  Write(Path("b.sqlite"), {{Key("two"), Valid(20), 200, 0}});
  auto counts = CopyCosts({Path("a.sqlite"), Path("b.sqlite")}, Path("into.sqlite"), "dev",
                          kLibraries);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->read, 5);
  EXPECT_EQ(counts->copied, 3);  // one, two, two again (newer)
  EXPECT_EQ(counts->other_devices, 1);
  EXPECT_EQ(counts->other_versions, 1);
  auto into = CostDatabase::Open(Path("into.sqlite"), nullptr);
  ASSERT_TRUE(into.ok());
  EXPECT_EQ(*(*into)->Count(), 2);
  EXPECT_DOUBLE_EQ((*(*into)->Find(Key("two")))->median_ms, 20);
  auto stats = (*into)->Stats(5);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->claims, 0) << "a claim was copied";
  // Copied again: nothing is newer.
  counts = CopyCosts({Path("a.sqlite")}, Path("into.sqlite"), "dev", kLibraries);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->copied, 0);
  EXPECT_EQ(counts->kept, 2);
}

TEST_F(CostCopyTest, AHostileSourceIsAnErrorAndTheDestinationStaysAsItWas) {
  Write(Path("good.sqlite"), {{Key("one"), Valid(1), 100, 0}});
  Write(Path("into.sqlite"), {{Key("mine"), Valid(5), 100, 0}});
  const std::string before = Bytes(Path("into.sqlite"));
  std::ofstream(Path("model.onnx")) << "not a database at all";
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", Path("device.sqlite"));
  Write(Path("newer.sqlite"), {{Key("x"), Valid(1), 100, 0}});
  {
    // PRAGMA user_version=99: the header's version field, as SQLite writes it.
    std::fstream file(Path("newer.sqlite"), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(60);
    const char version[4] = {0, 0, 0, 99};
    file.write(version, 4);
  }
  for (const std::string& source :
       {Path("model.onnx"), Path("fifo"), Path("device.sqlite"), Path("newer.sqlite"),
        Path("missing.sqlite")}) {
    auto counts = CopyCosts({Path("good.sqlite"), source}, Path("into.sqlite"), "dev", kLibraries);
    EXPECT_FALSE(counts.ok()) << source;
    EXPECT_NE(counts.status().message().find(source), std::string::npos)
        << counts.status().message();
    EXPECT_EQ(Bytes(Path("into.sqlite")), before) << source;
  }
  EXPECT_TRUE(fs::exists(Path("model.onnx")));
  EXPECT_FALSE(fs::exists(Path("missing.sqlite"))) << "a missing source was created";
  // Nor is a destination that is not a collage cost database written or moved aside.
  auto into_model = CopyCosts({Path("good.sqlite")}, Path("model.onnx"), "dev", kLibraries);
  EXPECT_FALSE(into_model.ok());
  EXPECT_EQ(Bytes(Path("model.onnx")), "not a database at all");
}

}  // namespace
}  // namespace collage
