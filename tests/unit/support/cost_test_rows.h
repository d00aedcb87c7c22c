// The key and record the cost database tests write, for both stores (SQLite, PostgreSQL):
// a record with every kind of layout, so that a round trip checks them all.
#pragma once

#include <string>

#include "cost/cost_database.h"

namespace collage::testing {

inline CostKey TestCostKey(const std::string& signature, int threads = 1) {
  return CostKey{"test-device", "onednn", "oneDNN 2.6.3 avx2", signature, threads, "scrub:64MiB"};
}

inline CostRecord TestValidRecord(double ms) {
  CostRecord r;
  r.valid = true;
  r.median_ms = ms;
  r.p90_ms = ms * 1.1;
  r.samples = 7;
  r.input_layouts = {Layout::Plain(), Layout::Opaque("onednn", "abcd8b:f32", 4096)};
  r.output_layouts = {Layout::ChannelsLast()};
  return r;
}

}  // namespace collage::testing
