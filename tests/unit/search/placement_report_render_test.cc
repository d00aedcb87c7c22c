// The report opens in a real browser: headless Chromium renders it to a PNG of the size asked
// for, with far more drawn on it than on a blank page. Skipped (saying why) where Chromium is
// not installed (`apt-get install chromium`; make test installs it).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>

#include "report_test_util.h"
#include "report/placement_report.h"
#include "util/subprocess.h"

namespace collage {
namespace {

using namespace testing;

constexpr int kWidth = 1400;
constexpr int kHeight = 2000;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

uint32_t BigEndian32(const std::string& bytes, size_t at) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

// Renders `page` to `png` with headless Chromium: a home, profile, configuration and cache of
// its own in `dir` (it leaves crash-report and dconf folders in the real ones otherwise), no
// sandbox (tests may run as root), shared memory in /tmp (a container's /dev/shm is small), and
// a time limit.
void Screenshot(const std::string& chromium, const TempDir& dir, const std::string& page,
                const std::string& png) {
  StatusOr<std::unique_ptr<Subprocess>> child = Subprocess::Spawn(
      "/usr/bin/env",
      {"HOME=" + dir.file("home"), "XDG_CONFIG_HOME=" + dir.file("config"),
       "XDG_CACHE_HOME=" + dir.file("cache"), chromium, "--headless", "--disable-gpu",
       "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars",
       "--user-data-dir=" + dir.file("profile"), "--screenshot=" + png,
       fmt::format("--window-size={},{}", kWidth, kHeight), "file://" + page});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  const std::string ended = (*child)->WaitForExit(std::chrono::seconds(90));
  EXPECT_EQ(ended, "exited with status 0") << (*child)->stderr_tail();
}

TEST(PlacementReportRenderTest, ChromiumRendersTheReportToAFullPicture) {
  const std::string chromium = FindOnPath("chromium");
  if (chromium.empty()) GTEST_SKIP() << "Chromium is not installed (apt-get install chromium)";
  TempDir dir;
  ReportFixture f = MakeReportFixture(4, /*region=*/true);
  const std::string page = dir.file("report.html");
  std::ofstream(page) << PlacementReportHtml(f.graph, f.report, f.in_run, {"model.onnx"});
  const std::string blank = dir.file("blank.html");
  std::ofstream(blank) << "<!DOCTYPE html><html><body></body></html>\n";

  Screenshot(chromium, dir, page, dir.file("report.png"));
  Screenshot(chromium, dir, blank, dir.file("blank.png"));
  const std::string png = ReadBytes(dir.file("report.png"));
  ASSERT_GT(png.size(), 24u) << "no screenshot written";
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(BigEndian32(png, 16), static_cast<uint32_t>(kWidth));
  EXPECT_EQ(BigEndian32(png, 20), static_cast<uint32_t>(kHeight));
  // A blank page compresses to almost nothing; text, boxes and curves do not.
  const size_t blank_size = ReadBytes(dir.file("blank.png")).size();
  EXPECT_GT(png.size(), 5 * blank_size) << "the report rendered (almost) blank";
  EXPECT_GT(png.size(), 40000u);
}

}  // namespace
}  // namespace collage
