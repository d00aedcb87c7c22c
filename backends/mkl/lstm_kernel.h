// LSTM on MKL: the input projection of every time step as one product with the packed input
// weights, then per step the recurrent product of the batch's hidden state with the packed
// recurrent weights (cblas_sgemm_compute: the weights were packed once at compile time, and a
// product of a few rows is what the packed format is for), and the gates in vector passes
// (VML's tanh; a sigmoid is 0.5 * tanh(x / 2) + 0.5). Small batches make a recurrence a chain
// of small products: the per-step cost, not the arithmetic, decides, which is why MKL's
// packed path is offered beside oneDNN's RNN primitive and measurement picks.
//
// The ONNX forms it runs: every direction (forward, reverse, bidirectional), both layouts,
// the default activations (Sigmoid, Tanh, Tanh), clip, input_forget, peepholes, bias, initial
// states (computed or constant), any subset of the outputs. Not sequence_lens, other
// activations, other dtypes: the rule does not offer those (the reference kernel and oneDNN
// run them).
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::mkl {

// Whether `node` is an LSTM of that form.
bool LstmSupported(const Graph& graph, const Node& node);

// Rules "lstm" (the request's thread count for every product) and "lstm_serial" (the input
// projection on the request's threads, the recurrence on the calling thread alone: at a batch
// of a few rows, waking a team per step costs more than it gives).
StatusOr<std::unique_ptr<Kernel>> CompileLstm(const CompileRequest& request, bool serial_steps);

}  // namespace collage::mkl
