// LSTM, GRU and RNN on the oneDNN backend (rules lstm, gru, rnn) against the reference
// kernels: directions, layouts, optional inputs and outputs, GRU linear_before_reset, RNN
// activations, batch 1 and more, 1 and 2 threads; and the nodes the rules refuse.
#include <omp.h>

#include <functional>

#include "backend_test_util.h"
#include "runtime/threading.h"

namespace collage::testing {
namespace {

struct RnnCase {
  std::string op = "LSTM";
  std::string direction = "forward";
  int layout = 0;
  int64_t seq = 5, batch = 3, input = 4, hidden = 6;
  bool bias = true, init_h = false, init_c = false, peepholes = false, seq_lens = false;
  bool init_constant = false;             // initial states as constants, not graph inputs
  bool y = true, y_h = true, y_c = true;  // the outputs the graph returns
  bool empty_names = false;  // the others absent from the node (ONNX's empty output names)
  int linear_before_reset = 0;
  std::string activation;  // RNN: the function of every direction; empty: the default
  NamedAttributes extra;   // attributes the rules refuse

  std::string ToString() const {
    return op + " " + direction + " layout " + std::to_string(layout) + " batch " +
           std::to_string(batch) + (bias ? " B" : "") + (init_h ? " initial_h" : "") +
           (init_c ? " initial_c" : "") + (peepholes ? " P" : "") + (seq_lens ? " lens" : "") +
           (init_constant ? " constant states" : "") + (empty_names ? " empty names" : "") +
           " outputs " + (y ? "Y" : "-") + (y_h ? "Y_h" : "-") + (y_c ? "Y_c" : "-") + " lbr " +
           std::to_string(linear_before_reset) + " " + activation;
  }
};

int64_t Gates(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

Graph RnnGraph(const RnnCase& c) {
  GraphBuilder b("recurrent");
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  const int64_t gh = Gates(c.op) * c.hidden;
  const Shape x_shape =
      c.layout == 1 ? Shape{c.batch, c.seq, c.input} : Shape{c.seq, c.batch, c.input};
  const Shape state =
      c.layout == 1 ? Shape{c.batch, dirs, c.hidden} : Shape{dirs, c.batch, c.hidden};
  auto state_value = [&](const std::string& name) {
    return c.init_constant ? b.RandomNormal(name, state, 1.0f)
                           : b.Input(name, DType::kFloat32, state);
  };
  std::vector<ValueId> in = {
      b.Input("x", DType::kFloat32, x_shape),
      b.RandomNormal("w", {dirs, gh, c.input}, 0.5f),
      b.RandomNormal("r", {dirs, gh, c.hidden}, 0.5f),
      c.bias ? b.RandomNormal("b", {dirs, 2 * gh}, 0.5f) : kNoValue,
      c.seq_lens ? b.Constant<int32_t>("lens", {c.batch}, std::vector<int32_t>(c.batch, c.seq))
                 : kNoValue,
      c.init_h ? state_value("h0") : kNoValue};
  if (c.op == "LSTM") {
    in.push_back(c.init_c ? state_value("c0") : kNoValue);
    in.push_back(c.peepholes ? b.RandomNormal("p", {dirs, 3 * c.hidden}, 0.5f) : kNoValue);
  }
  while (in.back() == kNoValue) in.pop_back();
  NamedAttributes attrs = {
      {"direction", c.direction.c_str()}, {"hidden_size", c.hidden}, {"layout", c.layout}};
  if (c.op == "GRU") attrs.emplace_back("linear_before_reset", c.linear_before_reset);
  if (!c.activation.empty()) {
    attrs.emplace_back("activations", Attribute(std::vector<std::string>(dirs, c.activation)));
  }
  for (const NamedAttribute& a : c.extra) attrs.push_back(a);
  const std::vector<ValueId> out = b.NodeMulti(c.op, in, c.op == "LSTM" ? 3 : 2, attrs);
  if (c.y) b.Output(out[0]);
  if (c.y_h) b.Output(out[1]);
  if (c.op == "LSTM" && c.y_c) b.Output(out[2]);
  Graph graph = BuildOrFail(std::move(b));
  if (c.empty_names) {
    std::vector<ValueId>& outputs = graph.mutable_node(0).outputs;
    const bool kept[] = {c.y, c.y_h, c.y_c};
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!kept[i]) outputs[i] = kNoValue;
    }
    graph.RemoveDeadCode();  // drops the values no node produces now
    EXPECT_TRUE(graph.Validate().ok()) << graph.Validate().ToString();
  }
  return graph;
}

std::string RuleOf(const RnnCase& c) {
  return c.op == "LSTM" ? "lstm" : c.op == "GRU" ? "gru" : "rnn";
}

// The rule (its `_serial` form with `serial`) offers the node alone, and at `threads` threads
// it matches the reference.
void ExpectMatches(const RnnCase& c, int threads = 1, bool serial = false) {
  SCOPED_TRACE(c.ToString() + ", " + std::to_string(threads) + " threads" +
               (serial ? ", serial" : ""));
  ApplyThreadPolicy(threads);
  ExpectRuleMatches(RnnGraph(c), "onednn", RuleOf(c) + (serial ? "_serial" : ""), 1, 1e-4, 7,
                    threads);
  ApplyThreadPolicy(0);
}

// `test` on `base` in each direction and each layout.
void ForEachDirectionAndLayout(const RnnCase& base, const std::function<void(RnnCase)>& test) {
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    for (int layout : {0, 1}) {
      RnnCase c = base;
      c.direction = direction;
      c.layout = layout;
      test(c);
    }
  }
}

TEST(OnednnRnn, LstmDirectionsLayoutsAndOptionalInputs) {
  ForEachDirectionAndLayout(RnnCase(), [](RnnCase c) {
    ExpectMatches(c);
    c.bias = false;
    ExpectMatches(c);
    c.bias = true;
    c.init_h = c.init_c = c.peepholes = c.seq_lens = true;
    ExpectMatches(c);
    c.init_constant = true;
    ExpectMatches(c);
    c.init_constant = false;
    c.init_c = false;  // initial_h alone: oneDNN takes both states, c starts at zero
    ExpectMatches(c);
    c.init_h = false;
    c.init_c = true;
    ExpectMatches(c);
  });
}

TEST(OnednnRnn, LstmEachOutputOmitted) {
  for (const char* direction : {"forward", "bidirectional"}) {
    for (int layout : {0, 1}) {
      RnnCase c;
      c.direction = direction;
      c.layout = layout;
      c.init_h = c.init_c = true;
      for (int omitted = 0; omitted < 3; ++omitted) {
        c.y = omitted != 0;
        c.y_h = omitted != 1;
        c.y_c = omitted != 2;
        for (bool empty_names : {false, true}) {
          c.empty_names = empty_names;
          ExpectMatches(c);
        }
      }
      c.empty_names = false;
      c.y = c.y_c = false;  // Y_h alone
      c.y_h = true;
      ExpectMatches(c);
    }
  }
}

TEST(OnednnRnn, GruLinearBeforeReset) {
  for (int lbr : {0, 1}) {
    RnnCase gru;
    gru.op = "GRU";
    gru.linear_before_reset = lbr;
    ForEachDirectionAndLayout(gru, [](RnnCase c) {
      ExpectMatches(c);
      c.init_h = c.seq_lens = true;
      c.y = false;
      ExpectMatches(c);
      c.y = true;
      c.y_h = c.bias = false;
      ExpectMatches(c);
    });
  }
}

TEST(OnednnRnn, RnnActivations) {
  for (const char* activation : {"", "Tanh", "Relu", "Sigmoid"}) {
    RnnCase rnn;
    rnn.op = "RNN";
    rnn.activation = activation;
    ForEachDirectionAndLayout(rnn, [](RnnCase c) {
      c.init_h = c.layout == 1;
      ExpectMatches(c);
    });
  }
}

TEST(OnednnRnn, BatchOneAndTwoThreads) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (int64_t batch : {1, 4}) {
      for (int threads : {1, 2}) {
        RnnCase c;
        c.op = op;
        c.batch = batch;
        c.direction = "bidirectional";
        c.seq = 7;
        c.hidden = 16;
        c.input = 9;
        c.init_h = c.init_c = true;
        c.peepholes = c.op == "LSTM";
        ExpectMatches(c, threads);
        ExpectMatches(c, threads, /*serial=*/true);
      }
    }
  }
}

// A refused node is not offered, and compiling it anyway names the reason.
void ExpectRefused(const RnnCase& c, const std::string& reason) {
  SCOPED_TRACE(c.ToString());
  const Graph graph = RnnGraph(c);
  EXPECT_FALSE(RuleOffers(graph, "onednn", RuleOf(c)));
  const Rule* rule = BackendNamed("onednn").rules().FindRule(RuleOf(c));
  ASSERT_NE(rule, nullptr);
  const NodeId node = 0;
  ASSERT_EQ(graph.node(node).op_type, c.op);
  Match match;
  match.graph = &graph;
  match.root = node;
  match.op_nodes = {node};
  const CompileRequest request =
      CompileRequest::For(graph, SubGraph(graph.num_nodes(), {node}), RuleOf(c), 1);
  const StatusOr<std::unique_ptr<Kernel>> kernel = rule->compiler()(request, match);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(kernel.status().message().find(reason), std::string::npos)
      << kernel.status().ToString();
}

TEST(OnednnRnn, SerialKernelLeavesTheTeamSizeAsItFoundIt) {
  RnnCase c;
  c.op = "LSTM";
  ApplyThreadPolicy(2);
  const Graph g = RnnGraph(c);
  std::vector<Candidate> serial = CandidatesOf(g, "onednn", "lstm_serial");
  ASSERT_EQ(serial.size(), 1u);
  ExpectCandidateMatches(g, "onednn", serial[0], 1e-4, 7, 2);
  EXPECT_EQ(omp_get_max_threads(), 2);
  ApplyThreadPolicy(0);
}

TEST(OnednnRnn, RefusesWhatThePrimitiveCannotDo) {
  RnnCase clip;
  clip.extra = {{"clip", 3.0f}};
  ExpectRefused(clip, "clip");
  RnnCase forget;
  forget.extra = {{"input_forget", 1}};
  ExpectRefused(forget, "input_forget");
  RnnCase lstm_act;
  lstm_act.extra = {{"activations", Attribute(std::vector<std::string>{"Tanh", "Tanh", "Tanh"})}};
  ExpectRefused(lstm_act, "activation Tanh");
  RnnCase gru_act;
  gru_act.op = "GRU";
  gru_act.extra = {{"activations", Attribute(std::vector<std::string>{"Sigmoid", "Relu"})}};
  ExpectRefused(gru_act, "activation Relu");
  RnnCase rnn_act;
  rnn_act.op = "RNN";
  rnn_act.activation = "Softsign";
  ExpectRefused(rnn_act, "activation Softsign");
  RnnCase rnn_mixed;
  rnn_mixed.op = "RNN";
  rnn_mixed.direction = "bidirectional";
  rnn_mixed.extra = {{"activations", Attribute(std::vector<std::string>{"Tanh", "Relu"})}};
  ExpectRefused(rnn_mixed, "different activations");
}

TEST(OnednnRnn, RefusesVariableSequenceLengths) {
  GraphBuilder b("lens");
  const std::vector<ValueId> out = b.NodeMulti(
      "LSTM",
      {b.Input("x", DType::kFloat32, {5, 2, 4}), b.RandomNormal("w", {1, 12, 4}, 0.5f),
       b.RandomNormal("r", {1, 12, 3}, 0.5f), kNoValue, b.Constant<int32_t>("lens", {2}, {5, 3})},
      3, {{"hidden_size", 3}});
  b.Output(out[0]);
  EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(b)), "onednn", "lstm"));
}

}  // namespace
}  // namespace collage::testing
