// LSTM on the MKL backend (rules lstm and lstm_serial) against the reference kernels: each
// direction, both layouts, bias, peepholes, clip, input_forget, initial states given by the
// graph or as constants, the outputs in any subset, at 1 and 2 threads; and the forms the
// rules leave to other backends. Tolerance 1e-4 (normalized). Skipped without MKL.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend_test_util.h"
#include "collage/available_backends.h"

namespace collage::testing {
namespace {

struct LstmCase {
  std::string direction = "forward";
  int64_t layout = 0;
  int64_t seq = 5, batch = 3, input = 7, hidden = 9;
  bool bias = true, states = false, constant_states = false, peepholes = false;
  float clip = 0;
  bool input_forget = false;
  bool y = true, y_h = true, y_c = true;
  bool sequence_lens = false;
  std::string activations;  // every direction's three, "" for the default

  std::string Name() const {
    return direction + " layout " + std::to_string(layout) + (bias ? " B" : "") +
           (states ? (constant_states ? " constant states" : " states") : "") +
           (peepholes ? " P" : "") + (clip > 0 ? " clip" : "") +
           (input_forget ? " input_forget" : "") + " outputs " + (y ? "Y" : "-") +
           (y_h ? "Y_h" : "-") + (y_c ? "Y_c" : "-");
  }
};

Graph LstmGraph(const LstmCase& c) {
  GraphBuilder b("lstm", 17, 29);
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1, h = c.hidden;
  const Shape state = c.layout == 1 ? Shape{c.batch, dirs, h} : Shape{dirs, c.batch, h};
  auto state_value = [&](const std::string& name) {
    return c.constant_states ? b.RandomNormal(name, state, 1.0f)
                             : b.Input(name, DType::kFloat32, state);
  };
  std::vector<ValueId> in = {
      b.Input("x", DType::kFloat32,
              c.layout == 1 ? Shape{c.batch, c.seq, c.input} : Shape{c.seq, c.batch, c.input}),
      b.RandomNormal("w", {dirs, 4 * h, c.input}, 0.5f),
      b.RandomNormal("r", {dirs, 4 * h, h}, 0.5f),
      c.bias ? b.RandomNormal("b", {dirs, 8 * h}, 0.5f) : kNoValue,
      c.sequence_lens ? b.Constant<int32_t>("lens", {c.batch}, std::vector<int32_t>(c.batch, c.seq))
                      : kNoValue,
      c.states ? state_value("h0") : kNoValue,
      c.states ? state_value("c0") : kNoValue,
      c.peepholes ? b.RandomNormal("p", {dirs, 3 * h}, 0.5f) : kNoValue};
  while (in.back() == kNoValue) in.pop_back();
  NamedAttributes attrs = {
      {"direction", c.direction.c_str()}, {"hidden_size", h}, {"layout", c.layout}};
  if (c.clip > 0) attrs.emplace_back("clip", c.clip);
  if (c.input_forget) attrs.emplace_back("input_forget", int64_t{1});
  if (!c.activations.empty()) {
    std::vector<std::string> names;
    for (int64_t d = 0; d < dirs; ++d)
      names.insert(names.end(), {"Sigmoid", c.activations, "Tanh"});
    attrs.emplace_back("activations", Attribute(names));
  }
  const std::vector<ValueId> out = b.NodeMulti("LSTM", in, 3, attrs);
  if (c.y) b.Output(out[0]);
  if (c.y_h) b.Output(out[1]);
  if (c.y_c) b.Output(out[2]);
  return BuildOrFail(std::move(b));
}

class MklLstmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (GlobalBackendRegistry().Find("mkl") == nullptr) GTEST_SKIP() << "mkl is not built";
  }
};

void ExpectBothRulesMatch(const LstmCase& c) {
  SCOPED_TRACE(c.Name());
  const Graph graph = LstmGraph(c);
  for (const char* rule : {"lstm", "lstm_serial"}) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(rule) + " at " + std::to_string(threads) + " threads");
      ExpectRuleMatches(graph, "mkl", rule, 1, 1e-4, 13, threads);
    }
  }
}

TEST_F(MklLstmTest, EachDirectionAndLayout) {
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    for (int64_t layout : {0, 1}) {
      LstmCase c;
      c.direction = direction;
      c.layout = layout;
      ExpectBothRulesMatch(c);
    }
  }
}

TEST_F(MklLstmTest, OptionalInputsAndTheCellsOptions) {
  LstmCase states;
  states.direction = "bidirectional";
  states.states = true;
  states.peepholes = true;
  ExpectBothRulesMatch(states);
  LstmCase constant = states;
  constant.layout = 1;
  constant.constant_states = true;
  ExpectBothRulesMatch(constant);
  LstmCase clipped;
  clipped.clip = 0.5f;
  clipped.bias = false;
  ExpectBothRulesMatch(clipped);
  LstmCase coupled;
  coupled.direction = "reverse";
  coupled.input_forget = true;
  coupled.peepholes = true;
  coupled.activations = "Tanh";  // the defaults, spelled out
  ExpectBothRulesMatch(coupled);
  LstmCase single_row;
  single_row.batch = 1;
  single_row.seq = 1;
  ExpectBothRulesMatch(single_row);
}

TEST_F(MklLstmTest, AnySubsetOfTheOutputs) {
  LstmCase only_y;
  only_y.y_h = only_y.y_c = false;
  ExpectBothRulesMatch(only_y);
  LstmCase only_states;
  only_states.direction = "bidirectional";
  only_states.y = false;
  ExpectBothRulesMatch(only_states);
  LstmCase only_cell;
  only_cell.y = only_cell.y_h = false;
  ExpectBothRulesMatch(only_cell);
}

TEST_F(MklLstmTest, LeavesSequenceLengthsAndOtherActivationsToOthers) {
  LstmCase lens;
  lens.sequence_lens = true;
  EXPECT_FALSE(RuleOffers(LstmGraph(lens), "mkl", "lstm"));
  LstmCase relu;
  relu.activations = "Relu";
  EXPECT_FALSE(RuleOffers(LstmGraph(relu), "mkl", "lstm"));
  // Weights the graph computes are not packed at compile time.
  GraphBuilder b("computed weights");
  ValueId x = b.Input("x", DType::kFloat32, {2, 1, 3});
  ValueId w = b.Input("w", DType::kFloat32, {1, 8, 3});
  ValueId r = b.RandomNormal("r", {1, 8, 2}, 0.5f);
  b.Output(b.NodeMulti("LSTM", {x, w, r}, 3, {{"hidden_size", int64_t{2}}})[0]);
  EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(b)), "mkl", "lstm"));
}

}  // namespace
}  // namespace collage::testing
