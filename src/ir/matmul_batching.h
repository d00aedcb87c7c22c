// Small matrix products batched: MatMuls by constant weights rewritten into fewer, larger
// products, where the products have so few rows that streaming their weights is their cost.
//
//   - Siblings: MatMuls of one input A by constant 2-D weights B_i [K, N_i] become one
//     product A·[B_1 | … | B_n] and a Split of its last axis into the old outputs.
//   - Shared weights: MatMuls of one constant 2-D weight B by inputs A_t [..., M_t, K] that do
//     not depend on one another (same leading dims) become one product Concat(A_t)·B, the
//     inputs joined along their rows (axis -2), and a Split of its rows into the old outputs.
//
// A recurrent cell unrolled over a sequence is both: per step, several linear maps of the same
// input; over the steps, the same weights applied to every input of the sequence. Each is a
// matrix-vector product that reads all its weights for a few hundred multiply-adds per row:
// stacking the steps reads the input weights once instead of once per step, and merging the
// siblings pays one call (and one split of the work over the threads) instead of one each.
//
// Both only fire where the rewrite moves fewer bytes than it adds (the Split and Concat copy
// rows the products already wrote or read): shared weights when the weights saved,
// (n - 1)·K·N, are at least four times the rows copied in and out, 2·rows·(K + N); siblings
// when the rows are few against the weights they meet (rows·16 ≤ K, so the Split's copy is at
// most an eighth of the weights' bytes). A transformer's projections over a whole sequence
// (rows = tokens) are left as they are.
//
// Outputs keep their value ids, names and types (the Split writes them); the nodes are
// re-ordered topologically, each new product placed where its first member was.
#pragma once

#include "collage/sdk/graph.h"
#include "collage/status.h"

namespace collage {

struct MatMulBatchingStats {
  int siblings_merged = 0;  // MatMuls folded into a wider product with their siblings
  int steps_stacked = 0;    // MatMuls folded into a taller product sharing their weights
};

// Rewrites `graph` in place until neither rewrite fires again. The graph must be valid.
StatusOr<MatMulBatchingStats> BatchSmallMatMuls(Graph& graph);

}  // namespace collage
