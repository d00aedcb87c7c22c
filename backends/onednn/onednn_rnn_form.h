// What an ONNX LSTM, GRU or RNN node asks of oneDNN's RNN primitives, or why they cannot run
// it; and its constants (W, R, B, P) in the primitive's gate order.
#pragma once

#include <string>

#include "onednn_util.h"

namespace collage::onednn {

enum class Cell { kLstm, kGru, kRnn };

// ONNX input and output slots, shared by the three ops (GRU and RNN stop at initial_h / Y_h).
constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitialH = 5, kInitialC = 6, kP = 7;
constexpr size_t kY = 0, kYH = 1, kYC = 2;

inline const char* OpName(Cell cell) {
  return cell == Cell::kLstm ? "LSTM" : cell == Cell::kGru ? "GRU" : "RNN";
}
inline int64_t GatesOf(Cell cell) { return cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1; }

// The node's slot, kNoValue when absent or past its last input / output.
inline ValueId InputAt(const Node& node, size_t slot) {
  return slot < node.inputs.size() ? node.inputs[slot] : kNoValue;
}
inline ValueId OutputAt(const Node& node, size_t slot) {
  return slot < node.outputs.size() ? node.outputs[slot] : kNoValue;
}

// What the node asks, in oneDNN's terms.
struct RnnForm {
  Cell cell = Cell::kLstm;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool reverse = false;      // one direction, right to left
  bool batch_major = false;  // layout = 1
  bool linear_before_reset = false;
  dnnl::algorithm activation = dnnl::algorithm::eltwise_tanh;  // RNN only
};

// Why the primitive cannot run `node`, as Unsupported; the form otherwise.
StatusOr<RnnForm> ReadRnnFormOrWhy(const Graph& graph, const Node& node, Cell cell);

// W [D, G·H, K] (or R with K = H) with its gates in oneDNN's order, reordered into `desc`
// (oneDNN's ldigo dims {1, D, K, G, H}).
StatusOr<dnnl::memory> GateWeights(const RnnForm& f, const Tensor& onnx, int64_t k,
                                   const dnnl::memory::desc& desc);
// oneDNN's bias {1, D, G (+1 for lbr_gru), H} from ONNX's B (null: zeros).
Tensor GateBias(const RnnForm& f, const Tensor* onnx);
// oneDNN's peephole weights {1, D, 3, H} from ONNX's P.
Tensor Peepholes(const RnnForm& f, const Tensor& onnx);

}  // namespace collage::onednn
