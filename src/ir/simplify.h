// Graph simplifications before placement: rewrites that give the same outputs (within
// float rounding) with less work, or in ops more backends fuse.
//
//   - BatchNormalization after a Conv or ConvTranspose (all parameters constant, the
//     convolution's output read by the BatchNormalization alone) folds into its weights and
//     bias, as exporters do for eval-mode Conv models when asked (a DCGAN generator's
//     ConvTranspose → BatchNorm → ReLU becomes one fusable ConvTranspose → ReLU);
//   - two Transposes in a row that compose to the identity vanish, when nothing else reads
//     the one between;
//   - a node that computes what an earlier one computes (same op, inputs and attributes; not
//     a random draw) goes, its readers reading the earlier one's outputs (ir/same_computation.h);
//   - small matrix products batched (ir/matmul_batching.h): MatMuls of one input by several
//     constant weights become one wider product, MatMuls of one constant weight by inputs that
//     do not depend on one another one taller product (a recurrent cell's linear maps, per
//     step and over the steps), where their rows are so few that reading the weights is their
//     cost;
//   - a DequantizeLinear read by several nodes becomes one per reader, so that each reader's
//     integer kernel can take its own (ir/dequantize_per_reader.h);
//   - a Pad with all pads zero (PyTorch's DenseNet export has three before its transition
//     poolings) vanishes when its output is not a graph output: it is a copy, and one that
//     only the reference kernels run, between two other libraries' kernels.
//
// Every rewrite keeps the graph's inputs, outputs and their names; nodes keep their names
// (a folded BatchNormalization's output keeps its name, on the Conv). What only changes how a
// computation is written stays as the exporter wrote it: the engines' optimizers look for the
// exporters' forms (Pow by 2 or 3 stays a Pow, which the reference kernel computes by
// multiplying: rewritten as Mul, ONNX Runtime no longer fused GPT-2's GELU and ran it 8%
// slower, docs/measurements.md).
#pragma once

#include "collage/status.h"
#include "collage/sdk/graph.h"

namespace collage {

struct SimplifyStats {
  int batchnorms_folded = 0;
  int transposes_cancelled = 0;
  int zero_pads_removed = 0;
  int duplicates_removed = 0;
  int matmuls_merged = 0;   // folded into one product with their siblings (same input)
  int matmuls_stacked = 0;  // folded into one product sharing their weights (same weight)
  int dequantizes_copied = 0;  // copies of a DequantizeLinear made for its second and later readers
  int total() const {
    return batchnorms_folded + transposes_cancelled + zero_pads_removed +
           duplicates_removed + matmuls_merged + matmuls_stacked + dequantizes_copied;
  }
};

// Rewrites `graph` in place (ids renumbered when anything changed).
StatusOr<SimplifyStats> SimplifyGraph(Graph& graph);

}  // namespace collage
