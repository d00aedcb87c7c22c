// ReducePlan: walking a tensor for a reduction over any set of axes in one pass, in memory
// order. Size-1 dims are dropped and adjacent dims that are both reduced (or both kept) are
// merged, so the walk is a few nested loops whatever the axes: ReduceMean over H,W of NCHW
// is [N*C kept, H*W reduced]; over C it is [N kept, C reduced, H*W kept].
#pragma once

#include <cstdint>
#include <vector>

#include "collage/tensor.h"
#include "ops/elementwise.h"

namespace collage {

class ReducePlan {
 public:
  // reduced[d]: whether dim d of `shape` is reduced.
  ReducePlan(const Shape& shape, const std::vector<bool>& reduced) {
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      if (!sizes_.empty() && reduced_.back() == reduced[d]) {
        sizes_.back() *= shape[d];
      } else {
        sizes_.push_back(shape[d]);
        reduced_.push_back(reduced[d]);
      }
    }
    if (sizes_.empty()) {
      sizes_.push_back(1);
      reduced_.push_back(false);
    }
    const size_t g = sizes_.size();
    in_strides_.assign(g, 1);
    out_strides_.assign(g, 0);
    int64_t in_stride = 1;
    int64_t out_stride = 1;
    for (size_t d = g; d-- > 0;) {
      in_strides_[d] = in_stride;
      in_stride *= sizes_[d];
      if (reduced_[d]) {
        reduce_count_ *= sizes_[d];
      } else {
        out_strides_[d] = out_stride;
        out_stride *= sizes_[d];
        num_outputs_ *= sizes_[d];
      }
    }
    num_inputs_ = in_stride;
  }

  int64_t num_inputs() const { return num_inputs_; }
  int64_t num_outputs() const { return num_outputs_; }
  // How many input elements fold into each output element.
  int64_t reduce_count() const { return reduce_count_; }

  // Calls body(in_offset, out_offset, length, inner_reduced) for every innermost run, in
  // input memory order within each thread. With inner_reduced, input elements
  // [in_offset, in_offset + length) all fold into output out_offset; otherwise element
  // in_offset + i folds into output out_offset + i. When the outermost group is kept, its
  // slices go to different threads (they write disjoint outputs); `cost_per_element`
  // decides whether that pays.
  template <typename Body>
  void ForEachRun(int64_t cost_per_element, Body&& body) const {
    if (num_inputs_ == 0) return;
    const size_t g = sizes_.size();
    if (g >= 2 && !reduced_[0]) {
      ParallelFor(sizes_[0], cost_per_element * in_strides_[0], [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          Walk(1, i * in_strides_[0], i * out_strides_[0], body);
        }
      });
    } else {
      Walk(0, 0, 0, body);
    }
  }

 private:
  // Odometer over groups [first, g-1), the last group being the run.
  template <typename Body>
  void Walk(size_t first, int64_t in_base, int64_t out_base, Body& body) const {
    const size_t last = sizes_.size() - 1;
    const int64_t inner = sizes_[last];
    const bool inner_reduced = reduced_[last];
    if (first >= last) {
      body(in_base, out_base, inner, inner_reduced);
      return;
    }
    std::vector<int64_t> coord(last, 0);
    int64_t in = in_base;
    int64_t out = out_base;
    while (true) {
      body(in, out, inner, inner_reduced);
      bool advanced = false;
      for (size_t d = last; d > first && !advanced;) {
        --d;
        in += in_strides_[d];
        out += out_strides_[d];
        if (++coord[d] < sizes_[d]) {
          advanced = true;
        } else {
          in -= coord[d] * in_strides_[d];
          out -= coord[d] * out_strides_[d];
          coord[d] = 0;
        }
      }
      if (!advanced) return;  // every outer group wrapped around: done
    }
  }

  std::vector<int64_t> sizes_;
  std::vector<bool> reduced_;
  std::vector<int64_t> in_strides_;
  std::vector<int64_t> out_strides_;
  int64_t num_inputs_ = 1;
  int64_t num_outputs_ = 1;
  int64_t reduce_count_ = 1;
};

}  // namespace collage
