// The report's durations read at every scale (never "0 us"), a backend keeps its colour from
// report to report, and a label is cut without breaking a character.
#include "report/report_text.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <vector>

#include "collage/available_backends.h"
#include "collage/sdk/backend.h"

namespace collage {
namespace {

TEST(ReportTextTest, DurationsAreShownAtTheirScale) {
  EXPECT_EQ(FormatDuration(0), "0");
  EXPECT_EQ(FormatDuration(0.0004), "400 ns");
  EXPECT_EQ(FormatDuration(0.0000004), "< 1 ns");
  EXPECT_EQ(FormatDuration(0.0042), "4.2 µs");
  EXPECT_EQ(FormatDuration(0.2), "200 µs");
  EXPECT_EQ(FormatDuration(3.4), "3.40 ms");
  EXPECT_EQ(FormatDuration(1250), "1.25 s");
  for (double ms : {1e-7, 1e-6, 1e-5, 1e-4, 4.9e-4, 1e-3}) {
    const std::string text = FormatDuration(ms);
    EXPECT_NE(text.rfind("0 ", 0), 0u) << ms << " ms shown as " << text;
  }
}

TEST(ReportTextTest, EveryRegisteredBackendHasItsOwnColourFromThePalette) {
  const std::regex hex("#[0-9a-f]{6}");
  std::set<std::string> colours;
  const std::vector<const Backend*> backends = GlobalBackendRegistry().backends();
  ASSERT_GE(backends.size(), 2u) << "native and at least one library";
  for (const Backend* backend : backends) {
    const std::string colour = BackendColour(backend->name());
    EXPECT_TRUE(std::regex_match(colour, hex)) << backend->name() << ": " << colour;
    EXPECT_EQ(colour, BackendColour(backend->name())) << backend->name();
    colours.insert(colour);
  }
  EXPECT_EQ(colours.size(), backends.size()) << "two backends share a colour";
  // native is grey whatever else is built; the palette starts with the first backend after it.
  EXPECT_EQ(BackendColour("native"), "#9e9e9e");
  EXPECT_EQ(backends[0]->name(), "native");
  EXPECT_EQ(BackendColour(backends[1]->name()), "#1f77b4");
}

TEST(ReportTextTest, AnUnknownBackendGetsTheSameValidColourEveryTime) {
  const std::regex hex("#[0-9a-f]{6}");
  const std::string plugin = BackendColour("my_plugin_backend");
  EXPECT_TRUE(std::regex_match(plugin, hex)) << plugin;
  EXPECT_EQ(plugin, BackendColour("my_plugin_backend"));
  std::set<std::string> colours;
  for (const char* name : {"alpha", "beta", "gamma", "delta", "epsilon"})
    colours.insert(BackendColour(name));
  EXPECT_GE(colours.size(), 4u) << "names should spread over the hues";
}

TEST(ReportTextTest, TextIsDarkOnLightFillsAndLightOnDarkOnes) {
  EXPECT_EQ(TextColourOn("#ffffff"), "#000000");
  EXPECT_EQ(TextColourOn("#98df8a"), "#000000");
  EXPECT_EQ(TextColourOn("#1f77b4"), "#ffffff");
}

TEST(ReportTextTest, ShorteningCutsWholeCharactersAndEscapingCoversXml) {
  EXPECT_EQ(Shorten("Conv+Relu", 20), "Conv+Relu");
  EXPECT_EQ(Shorten("Conv+Relu+Add", 6), "Conv+…");
  EXPECT_EQ(Shorten("µµµµ", 3), "µµ…");
  EXPECT_EQ(Shorten("µµµ", 3), "µµµ");
  EXPECT_EQ(XmlEscape("a<b & \"c\">'d'"), "a&lt;b &amp; &quot;c&quot;&gt;&#39;d&#39;");
}

}  // namespace
}  // namespace collage
