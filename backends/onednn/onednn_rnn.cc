// The ONNX recurrent ops LSTM, GRU and RNN on oneDNN's RNN primitives (rules lstm, gru, rnn):
// one layer, both directions at once (bidirectional_concat), time-major (layout 0, tnc) or
// batch-major (layout 1, ntc) input, optional bias, initial states, LSTM peepholes and
// outputs. Weights are constants, reordered once at Compile into the primitive's format.
//
// Refused (the node stays on the reference kernel), as the primitive has no form for them:
// activation functions other than the defaults (LSTM sigmoid/tanh/tanh, GRU sigmoid/tanh;
// RNN: Tanh, Relu or Sigmoid, the same for both directions), `clip`, LSTM input_forget,
// sequence_lens other than seq_length for every batch entry, dtypes other than float32, and
// non-constant W, R, B or P.
#include <algorithm>
#include <optional>
#include <type_traits>

#include "onednn_rnn_form.h"
#include "onednn_rnn_kernel.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

bool RnnSupported(const Graph& graph, const Node& node, Cell cell) {
  return ReadRnnFormOrWhy(graph, node, cell).ok();
}

// The primitive's descriptors of the ports, by the node's layout.
struct PortDescs {
  memory::desc src_layer, dst_layer, src_iter, src_iter_c, dst_iter, dst_iter_c;
};

// Builds the ports and says which descriptors the primitive gets (a zero descriptor for
// states neither given nor wanted).
class PortPlanner {
 public:
  PortPlanner(const CompileRequest& request, const Node& node, const RnnForm& f)
      : request_(request), node_(node), f_(f) {}

  // X: [seq, batch, input] is tnc, [batch, seq, input] ntc; no copy.
  Status AddX(memory::desc& desc) {
    desc = memory::desc({f_.seq, f_.batch, f_.input}, memory::data_type::f32,
                        f_.batch_major ? Tag::ntc : Tag::tnc);
    return AddRead(DNNL_ARG_SRC_LAYER, node_.inputs[kX], desc, std::nullopt, false);
  }

  // Y: the concatenated directions {seq, batch, D·H} are ONNX's [batch, seq, D, H] (layout 1)
  // and, with one direction, its [seq, 1, batch, H]; layout 0 with two directions is
  // [seq, D, batch, H], which no strides give: the primitive writes the workspace and the
  // kernel copies it out.
  Status AddY(memory::desc& desc) {
    desc = memory::desc({f_.seq, f_.batch, f_.dirs * f_.hidden}, memory::data_type::f32,
                        f_.batch_major ? Tag::ntc : Tag::tnc);
    std::optional<Swap> swap;
    if (!f_.batch_major && f_.dirs == 2) swap = Swap{f_.seq, f_.batch, f_.dirs, f_.hidden};
    return AddWrite(DNNL_ARG_DST_LAYER, OutputAt(node_, kY), desc, swap);
  }

  // A pair of states (h and, for LSTM, c): oneDNN takes both or neither; one given alone
  // gets zeros (inputs) or a discarded buffer (outputs) for the other.
  Status AddStates(bool read, memory::desc& h, memory::desc& c) {
    const ValueId vh = read ? InputAt(node_, kInitialH) : OutputAt(node_, kYH);
    const ValueId vc = f_.cell == Cell::kLstm
                           ? (read ? InputAt(node_, kInitialC) : OutputAt(node_, kYC))
                           : kNoValue;
    const bool used_h = read ? vh != kNoValue : OutputIndex(vh).has_value();
    const bool used_c = read ? vc != kNoValue : OutputIndex(vc).has_value();
    h = c = memory::desc();
    if (!used_h && !used_c) return Status();
    const memory::desc state({1, f_.dirs, f_.batch, f_.hidden}, memory::data_type::f32, Tag::ldnc);
    // ONNX's [D, batch, H] is ldnc; batch-major [batch, D, H] is too with one direction.
    std::optional<Swap> swap;
    if (f_.batch_major && f_.dirs == 2) {
      swap = read ? Swap{1, f_.batch, f_.dirs, f_.hidden} : Swap{1, f_.dirs, f_.batch, f_.hidden};
    }
    h = state;
    const int arg_h = read ? DNNL_ARG_SRC_ITER : DNNL_ARG_DST_ITER;
    const int arg_c = read ? DNNL_ARG_SRC_ITER_C : DNNL_ARG_DST_ITER_C;
    COLLAGE_RETURN_IF_ERROR(read ? AddRead(arg_h, vh, state, swap, true)
                                 : AddWrite(arg_h, vh, state, swap));
    if (f_.cell != Cell::kLstm) return Status();
    c = state;
    return read ? AddRead(arg_c, vc, state, swap, true) : AddWrite(arg_c, vc, state, swap);
  }

  std::vector<Port> TakePorts() { return std::move(ports_); }

 private:
  std::optional<size_t> OutputIndex(ValueId v) const {
    if (v == kNoValue) return std::nullopt;
    auto it = std::find(request_.outputs.begin(), request_.outputs.end(), v);
    if (it == request_.outputs.end()) return std::nullopt;
    return static_cast<size_t>(it - request_.outputs.begin());
  }

  Status AddRead(int arg, ValueId v, const memory::desc& desc, std::optional<Swap> swap,
                 bool optional) {
    Port p;
    p.arg = arg;
    p.desc = desc;
    p.swap = swap;
    if (v == kNoValue) {
      if (!optional)
        return Internal("{} '{}': a required input is absent", OpName(f_.cell), node_.name);
      p.source = Port::Source::kZeros;
    } else if (graph().value(v).is_constant()) {
      p.source = Port::Source::kConstant;
      p.constant = graph().value(v).constant->ToVector<float>();
    } else {
      auto it = std::find(request_.inputs.begin(), request_.inputs.end(), v);
      if (it == request_.inputs.end())
        return Internal("value '{}' is not an input of the group", graph().value(v).name);
      p.source = Port::Source::kInput;
      p.index = static_cast<size_t>(it - request_.inputs.begin());
    }
    ports_.push_back(std::move(p));
    return Status();
  }

  Status AddWrite(int arg, ValueId v, const memory::desc& desc, std::optional<Swap> swap) {
    Port p;
    p.arg = arg;
    p.desc = desc;
    if (std::optional<size_t> index = OutputIndex(v)) {
      p.source = Port::Source::kOutput;
      p.index = *index;
      p.swap = swap;
    }
    ports_.push_back(std::move(p));
    return Status();
  }

  const Graph& graph() const { return *request_.graph; }

  const CompileRequest& request_;
  const Node& node_;
  const RnnForm& f_;
  std::vector<Port> ports_;
};

// The op descriptor of the node's cell.
template <typename Desc>
Desc MakeDesc(const RnnForm& f, const PortDescs& d, const memory::desc& wl, const memory::desc& wi,
              const memory::desc& bias, const memory::desc& peephole, dnnl::rnn_direction dir) {
  const auto prop = dnnl::prop_kind::forward_inference;
  if constexpr (std::is_same_v<Desc, dnnl::lstm_forward::desc>) {
    return Desc(prop, dir, d.src_layer, d.src_iter, d.src_iter_c, wl, wi, peephole, memory::desc(),
                bias, d.dst_layer, d.dst_iter, d.dst_iter_c);
  } else if constexpr (std::is_same_v<Desc, dnnl::vanilla_rnn_forward::desc>) {
    return Desc(prop, f.activation, dir, d.src_layer, d.src_iter, wl, wi, bias, d.dst_layer,
                d.dst_iter);
  } else {
    return Desc(prop, dir, d.src_layer, d.src_iter, wl, wi, bias, d.dst_layer, d.dst_iter);
  }
}

template <typename Forward>
StatusOr<std::unique_ptr<Kernel>> BuildKernel(const CompileRequest& request, const Node& node,
                                              const RnnForm& f, const std::string& what,
                                              bool serial) {
  const Graph& graph = *request.graph;
  PortPlanner planner(request, node, f);
  PortDescs d;
  COLLAGE_RETURN_IF_ERROR(planner.AddX(d.src_layer));
  COLLAGE_RETURN_IF_ERROR(planner.AddY(d.dst_layer));
  COLLAGE_RETURN_IF_ERROR(planner.AddStates(true, d.src_iter, d.src_iter_c));
  COLLAGE_RETURN_IF_ERROR(planner.AddStates(false, d.dst_iter, d.dst_iter_c));

  const int64_t gates = GatesOf(f.cell);
  const auto f32 = memory::data_type::f32;
  const memory::desc wl({1, f.dirs, f.input, gates, f.hidden}, f32, Tag::any);
  const memory::desc wi({1, f.dirs, f.hidden, gates, f.hidden}, f32, Tag::any);
  const ValueId b = InputAt(node, kB);
  const Tensor bias = GateBias(f, b != kNoValue ? &*graph.value(b).constant : nullptr);
  const memory::desc bias_desc = PlainDesc(bias.shape());
  const ValueId p = f.cell == Cell::kLstm ? InputAt(node, kP) : kNoValue;
  std::optional<Tensor> peephole;
  if (p != kNoValue) peephole = Peepholes(f, *graph.value(p).constant);
  const memory::desc peephole_desc = peephole ? PlainDesc(peephole->shape()) : memory::desc();

  // Both directions in one primitive: one call runs both, and its concatenated output is
  // ONNX's batch-major Y as it is (two l2r / r2l primitives would each need a strided Y).
  const dnnl::rnn_direction dir = f.dirs == 2 ? dnnl::rnn_direction::bidirectional_concat
                                  : f.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                              : dnnl::rnn_direction::unidirectional_left2right;
  const auto desc = MakeDesc<typename Forward::desc>(f, d, wl, wi, bias_desc, peephole_desc, dir);
  typename Forward::primitive_desc pd(desc, BaseAttr(), Engine());

  std::vector<std::pair<int, memory>> weights;
  COLLAGE_ASSIGN_OR_RETURN(memory w, GateWeights(f, *graph.value(node.inputs[kW]).constant, f.input,
                                                 pd.weights_layer_desc()));
  COLLAGE_ASSIGN_OR_RETURN(memory r, GateWeights(f, *graph.value(node.inputs[kR]).constant,
                                                 f.hidden, pd.weights_iter_desc()));
  COLLAGE_ASSIGN_OR_RETURN(memory bias_memory, ConstantMemory(bias, pd.bias_desc(), &bias_desc));
  weights.emplace_back(DNNL_ARG_WEIGHTS_LAYER, std::move(w));
  weights.emplace_back(DNNL_ARG_WEIGHTS_ITER, std::move(r));
  weights.emplace_back(DNNL_ARG_BIAS, std::move(bias_memory));
  if (peephole) {
    COLLAGE_ASSIGN_OR_RETURN(memory pm, ConstantMemory(*peephole, peephole_desc));
    weights.emplace_back(DNNL_ARG_WEIGHTS_PEEPHOLE, std::move(pm));
  }
  std::vector<Port> ports = planner.TakePorts();
  std::vector<bool> read(request.inputs.size(), false);
  for (const Port& port : ports) {
    if (port.source == Port::Source::kInput) read[port.index] = true;
  }
  for (size_t i = 0; i < read.size(); ++i) {
    if (!read[i])
      return Unsupported("group input '{}' is not read by {} '{}'",
                         graph.value(request.inputs[i]).name, OpName(f.cell), node.name);
  }
  std::unique_ptr<Kernel> kernel = std::make_unique<RnnKernel>(
      what + " " + pd.impl_info_str(), Forward(pd), pd.scratchpad_desc(), std::move(weights),
      std::move(ports), request.inputs.size(), request.outputs.size(), serial);
  return kernel;
}

StatusOr<std::unique_ptr<Kernel>> CompileRnn(const CompileRequest& request, const Match& match,
                                             Cell cell, bool serial) {
  const Node& node = match.root_node();
  StatusOr<RnnForm> form = ReadRnnFormOrWhy(*request.graph, node, cell);
  if (!form.ok()) {
    return Unsupported("{} '{}' on oneDNN: {}", OpName(cell), node.name, form.status().message());
  }
  const std::string what = cell == Cell::kLstm         ? "lstm"
                           : cell == Cell::kRnn        ? "vanilla_rnn"
                           : form->linear_before_reset ? "lbr_gru"
                                                       : "gru";
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard(what, [&]() -> Status {
    // A serial kernel's primitive is created for one thread too (SerialScope).
    SerialScope team(serial);
    StatusOr<std::unique_ptr<Kernel>> built =
        cell == Cell::kLstm ? BuildKernel<dnnl::lstm_forward>(request, node, *form, what, serial)
        : cell == Cell::kRnn
            ? BuildKernel<dnnl::vanilla_rnn_forward>(request, node, *form, what, serial)
        : form->linear_before_reset
            ? BuildKernel<dnnl::lbr_gru_forward>(request, node, *form, what, serial)
            : BuildKernel<dnnl::gru_forward>(request, node, *form, what, serial);
    if (!built.ok()) return built.status();
    kernel = std::move(*built);
    return Status();
  }));
  return kernel;
}

// `serial`: the kernel runs on one thread whatever the session's count (RnnKernel).
Rule RnnRule(const std::string& name, Cell cell, bool serial) {
  const std::string op = OpName(cell);
  // X, W, R, B, sequence_lens, initial_h (, initial_c, P).
  std::vector<Pattern> inputs = {
      Any(), Const(), Const(), Optional(Const()), Optional(Const()), Optional(Any())};
  if (cell == Cell::kLstm) {
    inputs.push_back(Optional(Any()));
    inputs.push_back(Optional(Const()));
  }
  const Pattern pattern =
      Op(op).WithInputs(std::move(inputs)).If([cell](const Graph& g, const Node& n) {
        return RnnSupported(g, n, cell);
      });
  return Rule(name, pattern).Compiles([cell, serial](const CompileRequest& r, const Match& m) {
    return CompileRnn(r, m, cell, serial);
  });
}

}  // namespace

void AddRnnRules(std::vector<RuleEntry>& rules) {
  for (bool serial : {false, true}) {
    const std::string suffix = serial ? "_serial" : "";
    rules.push_back({RnnRule("lstm" + suffix, Cell::kLstm, serial), false});
    rules.push_back({RnnRule("gru" + suffix, Cell::kGru, serial), false});
    rules.push_back({RnnRule("rnn" + suffix, Cell::kRnn, serial), false});
  }
}

}  // namespace collage::onednn
