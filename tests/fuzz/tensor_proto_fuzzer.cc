// libFuzzer target for the .pb reader (`collage run --input x=FILE.pb`, the ONNX conformance
// data): any byte string, written to a file and read with ReadTensorProtoFile, must give a
// tensor or an error Status, never a crash, a leak or undefined behaviour.
//
// The reader takes a path and resolves external data relative to the file's folder, so each
// input is written into a scratch folder holding one data file, kWeightsFile (fuzz_fixtures.h), for
// seeds with external data to point at (locations leaving the folder must be refused anyway).
//
// A tensor that reads must also survive the writer: WriteTensorProtoFile and back gives the
// same dtype, shape, bytes and name.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "fuzz_fixtures.h"
#include "fuzz_scratch.h"
#include "onnx/tensor_proto.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::string weights = collage::fuzz::WeightsBytes();
  collage::fuzz::ScratchDir::Get().Write(collage::fuzz::kWeightsFile, weights.data(),
                                         weights.size());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace collage;
  const fuzz::ScratchDir& scratch = fuzz::ScratchDir::Get();
  const std::string path = scratch.Write("input.pb", data, size);
  std::string name;
  auto tensor = ReadTensorProtoFile(path, &name);
  if (!tensor.ok()) {
    fuzz::CheckNotInternal("ReadTensorProtoFile", tensor.status());
    return 0;
  }
  const std::string rewritten = scratch.file("rewritten.pb");
  Status written = WriteTensorProtoFile(*tensor, name, rewritten);
  if (!written.ok())
    fuzz::Fail("WriteTensorProtoFile of a tensor that was read", written.ToString());
  std::string name_again;
  auto again = ReadTensorProtoFile(rewritten, &name_again);
  if (!again.ok())
    fuzz::Fail("re-reading what WriteTensorProtoFile wrote", again.status().ToString());
  if (!fuzz::SameTensor(*tensor, *again) || name_again != name) {
    fuzz::Fail("WriteTensorProtoFile and back changed the tensor");
  }
  return 0;
}
