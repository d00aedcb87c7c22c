// libFuzzer target for the .npy reader (`collage run --input x=FILE.npy`): any byte string
// must give a tensor or an error Status, never a crash, a leak or undefined behaviour. It
// reads from bytes, the entry point ReadNpyFile wraps, so no file is written per input.
//
// A tensor that reads must also survive the writer: NpyToBytes and back gives the same
// dtype, shape and bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "util/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace collage;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto tensor = NpyFromBytes(bytes, "fuzz.npy");
  if (!tensor.ok()) {
    fuzz::CheckNotInternal("NpyFromBytes", tensor.status());
    return 0;
  }
  auto written = NpyToBytes(*tensor);
  if (!written.ok())
    fuzz::Fail("NpyToBytes of a tensor that was read", written.status().ToString());
  auto again = NpyFromBytes(*written, "fuzz-rewritten.npy");
  if (!again.ok()) fuzz::Fail("re-reading what NpyToBytes wrote", again.status().ToString());
  if (!fuzz::SameTensor(*tensor, *again)) fuzz::Fail("NpyToBytes and back changed the tensor");
  return 0;
}
