// The measurement worker's protocol (docs/architecture.md, "Measurement worker"): what the
// parent (WorkerMeasurer) and collage_measure_worker say to each other over the worker's
// stdin and stdout. Machine-independent, so that measurements can later run on another
// machine: no pointers, every number little-endian with an explicit size.
//
// Frame:   u32 payload length, then the payload; the payload's first byte is its kind.
// Fields:  u8; i32/u32 (4 bytes); f64 (IEEE-754 bits as u64); text = u32 length + bytes;
//          lists = u32 count + items.
//
//   worker → parent, once at start:   'H' u32 version, u32 n, n × (text name, text version)
//   parent → worker:  'C' candidate:  text model (the group as a standalone ONNX model),
//                     text signature (GroupSignature of the group in the parent's graph),
//                     text backend, text rule, u8 precision (collage/precision.h),
//                     i32 threads, f64 tolerance, settings
//                     'V' conversion: text type ("float32[1x8x4x4]"), text from, text to
//                     (LayoutToText), i32 threads, settings
//   worker → parent, one per request: 'R' u8 valid, text reason, f64 median_ms, f64 p90_ms,
//                     i32 samples, list of text input layouts, list of text output layouts
//   relay → parent, one per request (collage_measure_worker --relay, docs/architecture.md):
//                     'F' full record: the 'R' fields, then f64 timed_out_after_s (0: not a
//                     time-out), u8 killed_from_outside — what a relay's own worker's death
//                     or silence made of the candidate, which an 'R' cannot say
//   settings:         i32 warmup_runs, i32 min_runs, i32 max_runs, f64 max_seconds,
//                     f64 target_spread, u64 scrub_bytes
//
// A request and its reply are one exchange; the worker answers one request at a time and
// ends at the end of its stdin.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "collage/precision.h"
#include "collage/sdk/graph.h"
#include "collage/status.h"
#include "cost/cost_database.h"
#include "cost/measure.h"

namespace collage {

// Bumped whenever a message changes; the parent refuses a worker of another version.
// 2: a candidate names its precision; 3: the relay's full record ('F').
inline constexpr uint32_t kWorkerProtocolVersion = 3;
// A frame longer than this is garbage (a crashed or foreign writer), not a model.
inline constexpr uint32_t kMaxWorkerFrameBytes = 1u << 30;

struct WorkerHello {
  uint32_t version = kWorkerProtocolVersion;
  std::vector<std::pair<std::string, std::string>> backends;  // name, version
};

struct CandidateRequest {
  std::string model;      // serialized ModelProto of the group alone
  std::string signature;  // the parent's GroupSignature of the group
  std::string backend;
  std::string rule;
  Precision precision = Precision::kFloat32;
  int32_t threads = 1;
  double tolerance = 0;
  MeasureSettings settings;
};

struct ConversionRequest {
  std::string type;  // TensorType::ToString
  std::string from;  // LayoutToText
  std::string to;
  int32_t threads = 1;
  MeasureSettings settings;
};

// A frame's payload kind (its first byte).
enum class WorkerMessage : uint8_t {
  kHello = 'H',
  kCandidate = 'C',
  kConversion = 'V',
  kRecord = 'R',
  kFullRecord = 'F',
  // The Ray dispatcher's envelope (cost/dispatch_protocol.h): kinds of the same byte, so
  // that a frame of one protocol is never taken for a frame of the other.
  kJob = 'J',
  kJobDone = 'D',
  kJobLost = 'L',
  kNodes = 'N',
  kFatal = 'X',
};

// Payloads (without the length prefix).
std::string EncodeHello(const WorkerHello& hello);
std::string EncodeCandidate(const CandidateRequest& request);
std::string EncodeConversion(const ConversionRequest& request);
std::string EncodeRecord(const CostRecord& record);
// Also carries timed_out_after_s and killed_from_outside: a relay's answer.
std::string EncodeFullRecord(const CostRecord& record);

// The kind of a payload; an error for an empty or unknown one.
StatusOr<WorkerMessage> PayloadKind(const std::string& payload);
// Each fails (kInvalidArgument, naming what is wrong) on a payload of another kind, a
// truncated one or one with bytes left over.
StatusOr<WorkerHello> DecodeHello(const std::string& payload);
StatusOr<CandidateRequest> DecodeCandidate(const std::string& payload);
StatusOr<ConversionRequest> DecodeConversion(const std::string& payload);
StatusOr<CostRecord> DecodeRecord(const std::string& payload);
StatusOr<CostRecord> DecodeFullRecord(const std::string& payload);

// The u32 length prefix, and reading one back (error above kMaxWorkerFrameBytes).
std::string FrameHeader(size_t payload_bytes);
StatusOr<uint32_t> FrameLength(const std::string& header);

// Blocking frame I/O on a file descriptor, for the worker's side. ReadFrame returns
// kNotFound at a clean end of file (before a frame starts).
Status WriteFrame(int fd, const std::string& payload);
StatusOr<std::string> ReadFrame(int fd);

// "float32[1x8x4x4]" (TensorType::ToString) back into a type.
StatusOr<TensorType> TensorTypeFromText(const std::string& text);

}  // namespace collage
