// Patterns read from text (what a C plug-in declares its rules with): the text they print
// back, the groups they match, and what is refused.
#include <gtest/gtest.h>

#include <string>

#include "collage/sdk/rule.h"
#include "ops/graph_builder.h"
#include "pattern/pattern_text.h"

namespace collage {
namespace {

std::string Reprinted(const std::string& text) {
  StatusOr<Pattern> pattern = ParsePatternText(text);
  if (!pattern.ok()) return "refused: " + pattern.status().message();
  return Rule("r", *pattern).Describe();
}

TEST(PatternTextTest, PrintsBackAsItWasWritten) {
  for (const std::string text :
       {"Relu(any)", "Relu(Conv(any, const, const?))", "Relu|Sigmoid(Add(any, const))",
        "Add((Relu(any) | Sigmoid(any)), const)", "Add((Relu(any) | const)?, any)",
        "com.microsoft::Gelu(any)", "Conv", "Relu()"}) {
    EXPECT_EQ(Reprinted(text), text);
  }
  EXPECT_EQ(Reprinted("  Relu ( Conv(any,const , const ? ) )"), "Relu(Conv(any, const, const?))");
}

TEST(PatternTextTest, MatchesWhatTheSamePatternBuiltInCodeMatches) {
  GraphBuilder builder("conv_relu");
  const ValueId x = builder.Input("x", DType::kFloat32, {1, 3, 8, 8});
  const ValueId w = builder.RandomNormal("w", {4, 3, 3, 3}, 0.1f);
  const ValueId conv = builder.Node("Conv", {x, w}, {{"pads", {1, 1, 1, 1}}}, "conv");
  builder.Output(builder.Node("Relu", {conv}, {}, "relu"));
  StatusOr<Graph> graph = std::move(builder).Build();
  ASSERT_TRUE(graph.ok()) << graph.status().message();

  StatusOr<Pattern> parsed = ParsePatternText("Relu(Conv(any, const, const?))");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const std::vector<Match> from_text = Rule("text", *parsed).FindAll(*graph);
  const std::vector<Match> in_code =
      Rule("code", Op("Relu")(Op("Conv")(Any(), Const(), Optional(Const())))).FindAll(*graph);
  ASSERT_EQ(from_text.size(), 1u);
  ASSERT_EQ(in_code.size(), 1u);
  EXPECT_EQ(from_text[0].op_nodes, in_code[0].op_nodes);
  EXPECT_EQ(from_text[0].captures, in_code[0].captures);
  EXPECT_EQ(from_text[0].captures.back(), kNoValue);  // the absent bias

  StatusOr<Pattern> wrong_input = ParsePatternText("Relu(Conv(const, const))");
  ASSERT_TRUE(wrong_input.ok());
  EXPECT_TRUE(Rule("text", *wrong_input).FindAll(*graph).empty());
}

TEST(PatternTextTest, RefusesWhatIsNotAPatternSayingWhere) {
  for (const std::string text : {"", "any", "const?", "Relu(any", "Relu(any,)", "Relu(any) x",
                                 "(Relu(any))", "Relu|", "Relu(any))", "Relu(@)", "Relu(any; const)"}) {
    StatusOr<Pattern> pattern = ParsePatternText(text);
    EXPECT_FALSE(pattern.ok()) << "'" << text << "' was accepted";
    if (!pattern.ok()) {
      EXPECT_NE(pattern.status().message().find("pattern '" + text + "'"), std::string::npos)
          << pattern.status().message();
    }
  }
  StatusOr<Pattern> unclosed = ParsePatternText("Relu(any");
  EXPECT_NE(unclosed.status().message().find("at character 9"), std::string::npos)
      << unclosed.status().message();
}

TEST(PatternTextTest, RefusesHostileSizesWithoutExhaustingTheStack) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "Relu(";
  StatusOr<Pattern> too_long = ParsePatternText(deep);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("longer than"), std::string::npos);

  std::string nested;
  for (int i = 0; i < 40; ++i) nested += "Relu(";
  nested += "any";
  for (int i = 0; i < 40; ++i) nested += ")";
  StatusOr<Pattern> too_deep = ParsePatternText(nested);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_NE(too_deep.status().message().find("deeper than"), std::string::npos);
}

}  // namespace
}  // namespace collage
