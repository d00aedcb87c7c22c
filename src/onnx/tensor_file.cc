#include "collage/tensor_file.h"

#include "onnx/tensor_proto.h"
#include "collage/sdk/errors.h"
#include "util/npy.h"

namespace collage {

namespace {
bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

StatusOr<Tensor> ReadTensorFile(const std::string& path) {
  if (EndsWith(path, ".npy")) return ReadNpyFile(path);
  if (EndsWith(path, ".pb")) return ReadTensorProtoFile(path);
  return InvalidArgument("{}: unknown tensor file type (use .npy or .pb)", path);
}

Status WriteTensorFiles(const Tensor& tensor, const std::string& name, const std::string& path_stem) {
  COLLAGE_RETURN_IF_ERROR(WriteNpyFile(tensor, path_stem + ".npy"));
  return WriteTensorProtoFile(tensor, name, path_stem + ".pb");
}

}  // namespace collage
