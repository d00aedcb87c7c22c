// MetadataOf (onnx_import.h): what an ONNX file says of itself, for Session::metadata().
#include "onnx/onnx_import.h"
#include "onnx/onnx_pb.h"

namespace collage {

ModelMetadata MetadataOf(const onnx::ModelProto& model) {
  ModelMetadata metadata;
  metadata.producer_name = model.producer_name();
  metadata.producer_version = model.producer_version();
  metadata.domain = model.domain();
  metadata.model_version = model.model_version();
  metadata.description = model.doc_string();
  metadata.graph_name = model.graph().name();
  metadata.graph_description = model.graph().doc_string();
  for (const onnx::StringStringEntryProto& entry : model.metadata_props()) {
    metadata.custom[entry.key()] = entry.value();
  }
  return metadata;
}

}  // namespace collage
