// libFuzzer target for the ONNX frontend: any byte string must give a Graph or an error
// Status — never a crash, a leak, undefined behaviour or an exception. Built only with
// -DCOLLAGE_FUZZ=ON (clang); scripts/fuzz_smoke.sh builds and runs it on
// tests/fuzz/corpus/model_loader.
//
// Beyond "does not crash", it checks invariants that must hold for every input:
// - kInternal means a broken invariant inside collage (including collage's type inference
//   disagreeing with ONNX's): treated as a crash;
// - an imported graph validates, exports, and re-imports to a graph of the same shape;
// - a model that runs in stages (control flow, shapes set by data) loads or gives an error
//   Status (StagedModel::Load).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"
#include "session/staged_model.h"

namespace {

[[noreturn]] void Fail(const char* what, const collage::Status& status) {
  std::fprintf(stderr, "model_loader_fuzzer: %s: %s\n", what, status.ToString().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto graph = collage::ImportOnnxBytes(bytes, {}, "fuzz.onnx");
  if (!graph.ok()) {
    if (graph.status().code() == collage::StatusCode::kInternal) Fail("import", graph.status());
    // A model whose control flow or shapes only a run decides: its checks and stages are built
    // (not run: a Loop may be written to run for ever).
    auto parsed = collage::ParseOnnxBytes(bytes, "fuzz.onnx");
    if (parsed.ok() && collage::StagedModel::NeedsStaging(*parsed)) {
      auto staged = collage::StagedModel::Load(*parsed, collage::SessionOptions{});
      if (!staged.ok() && staged.status().code() == collage::StatusCode::kInternal) {
        Fail("staged load", staged.status());
      }
    }
    return 0;
  }
  collage::Status valid = graph->Validate();
  if (!valid.ok()) Fail("Validate after import", valid);

  auto exported = collage::ExportOnnxBytes(*graph);
  if (!exported.ok()) Fail("export", exported.status());
  auto again = collage::ImportOnnxBytes(*exported, {}, "fuzz-reexported.onnx");
  if (!again.ok()) Fail("re-import of the export", again.status());
  if (again->num_nodes() != graph->num_nodes() || again->num_values() != graph->num_values() ||
      again->inputs().size() != graph->inputs().size() ||
      again->outputs().size() != graph->outputs().size()) {
    Fail("re-import changed the graph", collage::Status());
  }
  return 0;
}
