// The `openvino` backend's kernel: one region of ONNX nodes, serialized as a standalone ONNX
// model (onnx/group_model.h), read by OpenVINO's ONNX frontend and compiled by its CPU
// plug-in into one ov::CompiledModel, run zero-copy on the caller's buffers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/sdk/backend.h"

namespace collage::openvino {

// "OpenVINO 2026.4.1-... CPU f32": the build, the device and the precision forced on it.
std::string LibraryVersion();

// The reduced precisions the CPU plug-in computes in natively here: bf16 where it lists
// BF16 among its optimization capabilities (AVX-512 BF16 or AMX); none where it would emulate.
std::vector<Precision> ReducedPrecisions();

// Compiles the request's nodes for the CPU plug-in, in the request's precision (float32, or
// bf16 as the plug-in's inference precision: its matmuls, convolutions and most other ops in
// bf16, with float32 at the region's inputs and outputs). Every error (a node the frontend does not
// convert, a model the plug-in does not compile, a shape or dtype OpenVINO infers otherwise
// than collage) is a Status carrying OpenVINO's message, never an exception.
StatusOr<std::unique_ptr<Kernel>> CompileRegion(const CompileRequest& request);

}  // namespace collage::openvino
