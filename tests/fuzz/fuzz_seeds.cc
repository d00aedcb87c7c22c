// Writes the seed corpora of plan_fuzzer, npy_fuzzer, tensor_proto_fuzzer and
// cost_database_fuzzer with the real writers (MakePlan/PlanToJson, NpyToBytes,
// WriteTensorProtoFile, CostDatabase), plus near-valid files that each fail one check of
// the reader. Built with the fuzzers (target fuzz_seeds):
//
//   build-asan/fuzz_seeds tests/fuzz/corpus
//
// writes tests/fuzz/corpus/{plan,npy,tensor_proto,cost_database}/. The plans carry this
// machine's device fingerprint and backend versions; elsewhere they only warn.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "collage/available_backends.h"
#include "fuzz_fixtures.h"
#include "onnx/onnx_pb.h"
#include "onnx/tensor_proto.h"
#include "plan/plan.h"
#include "runtime/placement.h"
#include "util/npy.h"

namespace {

using namespace collage;
namespace fs = std::filesystem;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "fuzz_seeds: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T Check(StatusOr<T> value, const char* what) {
  if (!value.ok()) Die(std::string(what) + ": " + value.status().ToString());
  return std::move(*value);
}

void Check(const Status& status, const char* what) {
  if (!status.ok()) Die(std::string(what) + ": " + status.ToString());
}

void Store(const fs::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

// A seed: stored and listed.
void Write(const fs::path& file, const std::string& bytes) {
  Store(file, bytes);
  std::printf("%s (%zu bytes)\n", file.string().c_str(), bytes.size());
}

std::string Read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// --- plans -------------------------------------------------------------------------------

void PlanSeeds(const fs::path& dir) {
  const Graph graph = fuzz::PlanFuzzGraph();
  const BackendRegistry& registry = GlobalBackendRegistry();
  Plan native;
  for (const Backend* backend : registry.backends()) {
    Placement placement = Check(PlaceOnSingleBackend(graph, *backend, registry), "placement");
    Plan plan =
        MakePlan(graph, placement, registry, PlacementSource::SingleBackend(backend->name()), 1);
    plan.estimated_ms = 0.5;
    for (PlanGroup& group : plan.groups) group.cost_ms = 0.125;
    Write(dir / ("single_" + backend->name()), PlanToJson(plan));
    if (backend->name() == "native") native = plan;
  }
  // Near misses, each refused by one check: the native plan edited.
  auto edited = [&](const std::string& name, const std::function<void(Plan&)>& edit) {
    Plan plan = native;
    edit(plan);
    Write(dir / name, PlanToJson(plan));
  };
  edited("other_model", [](Plan& p) { p.model_hash = "0123456789abcdef"; });
  edited("unknown_backend", [](Plan& p) { p.groups[0].backend = "vendor_npu"; });
  edited("node_out_of_range", [](Plan& p) { p.groups[0].nodes.push_back(99); });
  edited("overlapping_groups", [](Plan& p) { p.groups[1].nodes.push_back(p.groups[0].nodes[0]); });
  edited("node_left_out", [](Plan& p) { p.groups.pop_back(); });
  edited("reversed_groups", [](Plan& p) { std::reverse(p.groups.begin(), p.groups.end()); });
  edited("non_convex_group", [](Plan& p) {  // {add, mul} without the sigmoid between them
    p.groups = {{"native", "", {0}, {}, 0},
                {"native", "", {1}, {}, 0},
                {"native", "", {2, 4}, {}, 0},
                {"native", "", {3}, {}, 0}};
  });
  edited("empty_group", [](Plan& p) { p.groups.push_back(PlanGroup{"native", "", {}, {}, 0}); });
  // A long list of ids (one repeated at its end): read in linear time, refused.
  edited("many_node_ids", [](Plan& p) {
    for (NodeId id = 5; id < 5000; ++id) p.groups[0].nodes.push_back(id);
    p.groups[0].nodes.push_back(7);
  });
  const std::string text = PlanToJson(native);
  Write(dir / "truncated", text.substr(0, text.size() / 2));
  std::string wrong_type = text;
  const size_t threads = wrong_type.find("\"threads\": 1");
  if (threads == std::string::npos) Die("no \"threads\": 1 in the plan");
  wrong_type.replace(threads, 12, "\"threads\": \"one\"");
  Write(dir / "wrong_field_type", wrong_type);
}

// --- .npy --------------------------------------------------------------------------------

void NpySeeds(const fs::path& dir) {
  auto npy = [](const Tensor& tensor) { return Check(NpyToBytes(tensor), "NpyToBytes"); };
  const std::string f32 = npy(Tensor::FromVector<float>({2, 3}, {0, 1, 2, 3, 4, 5}));
  Write(dir / "f4_2x3", f32);
  Write(dir / "i8_scalar", npy(Tensor::Scalar<int64_t>(-7)));
  Write(dir / "b1_4", npy(Tensor::FromVector<bool>({4}, {true, false, true, true})));
  Write(dir / "i2_2x1x2", npy(Tensor::FromVector<int16_t>({2, 1, 2}, {1, -2, 3, -4})));
  Write(dir / "u1_empty_0x3", npy(Tensor(DType::kUInt8, {0, 3})));
  Write(dir / "f2_3", npy(Tensor(DType::kFloat16, {3})));
  Write(dir / "f8_1", npy(Tensor::FromVector<double>({1}, {0.5})));

  // Near misses. The header of f32 is "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3),
  // }".
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string bytes = f32;
    const size_t at = bytes.find(from);
    if (at == std::string::npos) Die("no '" + from + "' in the .npy header");
    bytes.replace(at, from.size(), to);
    return bytes;
  };
  Write(dir / "truncated_data", f32.substr(0, f32.size() - 1));
  Write(dir / "trailing_byte", f32 + '\0');
  Write(dir / "big_endian", replaced("'<f4'", "'>f4'"));
  Write(dir / "fortran_order", replaced("False", "True "));
  Write(dir / "shape_not_a_tuple", replaced("(2, 3)", "(6)   "));
  std::string bad_bool = npy(Tensor::FromVector<bool>({2}, {true, false}));
  bad_bool.back() = 2;
  Write(dir / "bool_not_0_or_1", bad_bool);
  // Version 2.0: the same header behind a 4-byte length.
  std::string v2 = f32;
  v2[6] = 2;
  v2.insert(10, 2, '\0');
  Write(dir / "version_2", v2);
}

// --- .pb TensorProto ---------------------------------------------------------------------

void TensorProtoSeeds(const fs::path& dir) {
  auto pb = [&](const std::string& name, const Tensor& tensor, const std::string& tensor_name) {
    Check(WriteTensorProtoFile(tensor, tensor_name, (dir / name).string()), "WriteTensorProtoFile");
    std::printf("%s\n", (dir / name).string().c_str());
  };
  pb("f32_2x3", Tensor::FromVector<float>({2, 3}, {0, 1, 2, 3, 4, 5}), "x");
  pb("i64_scalar", Tensor::Scalar<int64_t>(42), "");
  pb("bool_3", Tensor::FromVector<bool>({3}, {true, false, true}), "mask");
  pb("f16_0x2", Tensor(DType::kFloat16, {0, 2}), "empty");

  auto proto_file = [&](const std::string& name,
                        const std::function<void(onnx::TensorProto&)>& fill) {
    onnx::TensorProto proto;
    fill(proto);
    Write(dir / name, proto.SerializeAsString());
  };
  proto_file("typed_int64_data", [](onnx::TensorProto& p) {
    p.set_data_type(onnx::TensorProto::INT64);
    p.add_dims(3);
    for (int64_t v : {1, -2, 3}) p.add_int64_data(v);
  });
  proto_file("typed_float_data", [](onnx::TensorProto& p) {
    p.set_data_type(onnx::TensorProto::FLOAT);
    p.add_dims(2);
    p.add_float_data(1.5f);
    p.add_float_data(-2.5f);
  });
  proto_file("typed_uint8_in_int32_data", [](onnx::TensorProto& p) {
    p.set_data_type(onnx::TensorProto::UINT8);
    p.add_dims(2);
    p.add_int32_data(7);
    p.add_int32_data(255);
  });
  proto_file("typed_count_mismatch", [](onnx::TensorProto& p) {
    p.set_data_type(onnx::TensorProto::DOUBLE);
    p.add_dims(3);
    p.add_double_data(1.0);
  });
  proto_file("negative_dim", [](onnx::TensorProto& p) {
    p.set_data_type(onnx::TensorProto::FLOAT);
    p.add_dims(-1);
    p.set_raw_data(std::string(4, '\0'));
  });
  proto_file("string_dtype", [](onnx::TensorProto& p) {
    p.set_data_type(onnx::TensorProto::STRING);
    p.add_dims(1);
    p.add_string_data("hello");
  });
  // External data in kWeightsFile, which the fuzzer's scratch folder holds.
  auto external = [&](const std::string& name, const std::string& location, int64_t offset,
                      int64_t length) {
    proto_file(name, [&](onnx::TensorProto& p) {
      p.set_name("weights");
      p.set_data_type(onnx::TensorProto::FLOAT);
      p.add_dims(4);
      p.add_dims(4);
      p.set_data_location(onnx::TensorProto::EXTERNAL);
      auto add = [&](const char* key, const std::string& value) {
        auto* entry = p.add_external_data();
        entry->set_key(key);
        entry->set_value(value);
      };
      add("location", location);
      add("offset", std::to_string(offset));
      if (length >= 0) add("length", std::to_string(length));
    });
  };
  external("external_data", fuzz::kWeightsFile, 64, 64);
  external("external_data_no_length", fuzz::kWeightsFile, 0, -1);
  external("external_data_past_end", fuzz::kWeightsFile, 224, 64);
  external("external_data_leaves_folder", std::string("../") + fuzz::kWeightsFile, 0, 64);
  const std::string good = Read(dir / "f32_2x3");
  Write(dir / "truncated", good.substr(0, good.size() - 5));
}

// --- cost database -----------------------------------------------------------------------

void Sql(const fs::path& file, const char* sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open(file.string().c_str(), &db) != SQLITE_OK) Die("sqlite3_open " + file.string());
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK)
    Die(std::string(sql) + ": " + error);
  sqlite3_close(db);
}

void CostDatabaseSeeds(const fs::path& dir) {
  const fs::path work =
      fs::temp_directory_path() / ("collage-fuzz-seeds-" + std::to_string(::getpid()));
  fs::remove_all(work);
  fs::create_directories(work);
  const fs::path file = work / "costs.sqlite";
  // 512-byte pages instead of 4096 keep the files small for the fuzzer: an empty database of
  // schema 0 with that page size, which Open takes as new and fills.
  Sql(file, "PRAGMA page_size=512; PRAGMA user_version=0;");
  {
    std::vector<std::string> warnings;
    auto db = Check(CostDatabase::Open(file.string(), &warnings), "CostDatabase::Open");
    if (!warnings.empty()) Die("Open warned: " + warnings[0]);
    CostRecord conv;
    conv.valid = true;
    conv.median_ms = 0.25;
    conv.p90_ms = 0.3;
    conv.samples = 20;
    conv.input_layouts = {Layout::ChannelsLast(), Layout::Plain()};
    conv.output_layouts = {Layout::Opaque("onednn", "nChw8c", 4608)};
    Check(db->Put(fuzz::SeedCostKey("conv"), conv), "Put");
    CostRecord relu;
    relu.reason = "disagreed with the reference kernels";
    Check(db->Put(fuzz::SeedCostKey("relu"), relu), "Put");
    Check(db->MarkMeasuring(fuzz::SeedCostKey("measuring"), /*in_this_process=*/true),
          "MarkMeasuring");
  }  // closing the last connection checkpoints the WAL into the file and removes it
  if (fs::exists(file.string() + "-wal")) Die("the WAL was left behind");
  const std::string valid = Read(file);
  Write(dir / "valid", valid);
  Write(dir / "truncated", valid.substr(0, valid.size() / 2));
  Write(dir / "new_empty_file", "");
  Write(dir / "not_a_database", "collage cost database? no.\n");

  Store(file, valid);
  Sql(file, "PRAGMA user_version=" + std::to_string(CostDatabase::kSchemaVersion + 1) + ";");
  Write(dir / "newer_schema", Read(file));
  fs::remove(file);
  Sql(file, "PRAGMA page_size=512; CREATE TABLE other(x INTEGER);");
  Write(dir / "another_sqlite_database", Read(file));
  fs::remove_all(work);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  const fs::path root(argv[1]);
  const std::pair<const char*, void (*)(const fs::path&)> targets[] = {
      {"plan", PlanSeeds},
      {"npy", NpySeeds},
      {"tensor_proto", TensorProtoSeeds},
      {"cost_database", CostDatabaseSeeds},
  };
  for (const auto& [name, write] : targets) {
    fs::create_directories(root / name);
    write(root / name);
  }
  return 0;
}
