#include "cost/worker_protocol.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "collage/sdk/errors.h"
#include "collage/shape_text.h"
#include "cost/protocol_fields.h"

namespace collage {
namespace {

using wire::Reader;
using wire::Writer;

// A field added to MeasureSettings must travel to the worker too (Writer::Settings,
// Reader::Settings, the header's table), or the worker measures another way than asked.
struct SettingsAsEncoded {
  int warmup_runs, min_runs, max_runs;
  double max_seconds, target_spread;
  size_t scrub_bytes;
  // Not encoded: the worker's MeasureCandidate sets it from the candidate's backend
  // (SettingsForBackend), as the in-process measurement does.
  bool scrub_on_calling_thread;
};
static_assert(sizeof(MeasureSettings) == sizeof(SettingsAsEncoded),
              "MeasureSettings changed: update the worker protocol's settings");

}  // namespace

std::string EncodeHello(const WorkerHello& hello) {
  Writer w(WorkerMessage::kHello);
  w.U32(hello.version);
  w.U32(static_cast<uint32_t>(hello.backends.size()));
  for (const auto& [name, version] : hello.backends) {
    w.Text(name);
    w.Text(version);
  }
  return w.Take();
}

std::string EncodeCandidate(const CandidateRequest& request) {
  Writer w(WorkerMessage::kCandidate);
  w.Text(request.model);
  w.Text(request.signature);
  w.Text(request.backend);
  w.Text(request.rule);
  w.U8(static_cast<uint8_t>(request.precision));
  w.I32(request.threads);
  w.F64(request.tolerance);
  w.Settings(request.settings);
  return w.Take();
}

std::string EncodeConversion(const ConversionRequest& request) {
  Writer w(WorkerMessage::kConversion);
  w.Text(request.type);
  w.Text(request.from);
  w.Text(request.to);
  w.I32(request.threads);
  w.Settings(request.settings);
  return w.Take();
}

namespace {

// The fields an 'R' record and an 'F' full record share.
void WriteRecordFields(Writer& w, const CostRecord& record) {
  w.U8(record.valid ? 1 : 0);
  w.Text(record.reason);
  w.F64(record.median_ms);
  w.F64(record.p90_ms);
  w.I32(record.samples);
  for (const std::vector<Layout>* layouts : {&record.input_layouts, &record.output_layouts}) {
    w.U32(static_cast<uint32_t>(layouts->size()));
    for (const Layout& layout : *layouts) w.Text(LayoutToText(layout));
  }
}

Status ReadRecordFields(Reader& r, CostRecord* record) {
  record->valid = r.U8() != 0;
  record->reason = r.Text();
  record->median_ms = r.F64();
  record->p90_ms = r.F64();
  record->samples = r.I32();
  for (std::vector<Layout>* layouts : {&record->input_layouts, &record->output_layouts}) {
    for (uint32_t n = r.Count(4); n > 0; --n) {
      const std::string text = r.Text();
      auto layout = LayoutFromText(text);
      if (!layout.ok())
        return InvalidArgument("measurement-worker record: {}", layout.status().message());
      layouts->push_back(*layout);
    }
  }
  return Status();
}

}  // namespace

std::string EncodeRecord(const CostRecord& record) {
  Writer w(WorkerMessage::kRecord);
  WriteRecordFields(w, record);
  return w.Take();
}

std::string EncodeFullRecord(const CostRecord& record) {
  Writer w(WorkerMessage::kFullRecord);
  WriteRecordFields(w, record);
  w.F64(record.timed_out_after_s);
  w.U8(record.killed_from_outside ? 1 : 0);
  return w.Take();
}

StatusOr<WorkerMessage> PayloadKind(const std::string& payload) {
  if (!payload.empty()) {
    switch (static_cast<WorkerMessage>(payload[0])) {
      case WorkerMessage::kHello:
      case WorkerMessage::kCandidate:
      case WorkerMessage::kConversion:
      case WorkerMessage::kRecord:
      case WorkerMessage::kFullRecord:
      case WorkerMessage::kJob:
      case WorkerMessage::kJobDone:
      case WorkerMessage::kJobLost:
      case WorkerMessage::kNodes:
      case WorkerMessage::kFatal: return static_cast<WorkerMessage>(payload[0]);
    }
  }
  return InvalidArgument("not a measurement-worker message ({} bytes)", payload.size());
}

StatusOr<WorkerHello> DecodeHello(const std::string& payload) {
  Reader r(payload, WorkerMessage::kHello, "hello");
  WorkerHello hello;
  hello.version = r.U32();
  for (uint32_t n = r.Count(8); n > 0; --n) {
    std::string name = r.Text();
    hello.backends.emplace_back(std::move(name), r.Text());
  }
  COLLAGE_RETURN_IF_ERROR(r.Finish());
  return hello;
}

StatusOr<CandidateRequest> DecodeCandidate(const std::string& payload) {
  Reader r(payload, WorkerMessage::kCandidate, "candidate");
  CandidateRequest request;
  request.model = r.Text();
  request.signature = r.Text();
  request.backend = r.Text();
  request.rule = r.Text();
  const uint8_t precision = r.U8();
  request.threads = r.I32();
  request.tolerance = r.F64();
  request.settings = r.Settings();
  COLLAGE_RETURN_IF_ERROR(r.Finish());
  if (precision > static_cast<uint8_t>(Precision::kBfloat16)) {
    return InvalidArgument("candidate: unknown precision {}", precision);
  }
  request.precision = static_cast<Precision>(precision);
  return request;
}

StatusOr<ConversionRequest> DecodeConversion(const std::string& payload) {
  Reader r(payload, WorkerMessage::kConversion, "conversion");
  ConversionRequest request;
  request.type = r.Text();
  request.from = r.Text();
  request.to = r.Text();
  request.threads = r.I32();
  request.settings = r.Settings();
  COLLAGE_RETURN_IF_ERROR(r.Finish());
  return request;
}

StatusOr<CostRecord> DecodeRecord(const std::string& payload) {
  Reader r(payload, WorkerMessage::kRecord, "record");
  CostRecord record;
  COLLAGE_RETURN_IF_ERROR(ReadRecordFields(r, &record));
  COLLAGE_RETURN_IF_ERROR(r.Finish());
  return record;
}

StatusOr<CostRecord> DecodeFullRecord(const std::string& payload) {
  Reader r(payload, WorkerMessage::kFullRecord, "full record");
  CostRecord record;
  COLLAGE_RETURN_IF_ERROR(ReadRecordFields(r, &record));
  record.timed_out_after_s = r.F64();
  const uint8_t killed = r.U8();
  COLLAGE_RETURN_IF_ERROR(r.Finish());
  // Not a flag: damaged bytes, refused rather than read as "killed".
  if (killed > 1) return InvalidArgument("measurement-worker full record: flag {}", killed);
  // A time limit is a positive number of seconds, or 0 for none; NaN would never compare.
  if (!(record.timed_out_after_s >= 0))
    return InvalidArgument("measurement-worker full record: time-out {}", record.timed_out_after_s);
  record.killed_from_outside = killed == 1;
  return record;
}

std::string FrameHeader(size_t payload_bytes) {
  std::string header(4, '\0');
  for (int i = 0; i < 4; ++i)
    header[static_cast<size_t>(i)] = static_cast<char>(payload_bytes >> (8 * i));
  return header;
}

StatusOr<uint32_t> FrameLength(const std::string& header) {
  if (header.size() != 4)
    return InvalidArgument("a frame header has 4 bytes, not {}", header.size());
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<uint32_t>(static_cast<uint8_t>(header[static_cast<size_t>(i)])) << (8 * i);
  if (n == 0 || n > kMaxWorkerFrameBytes) {
    return InvalidArgument("measurement-worker frame of {} bytes (expected 1 to {})", n,
                           kMaxWorkerFrameBytes);
  }
  return n;
}

namespace {

// kNotFound when the end of file comes before the first byte.
Status ReadExactly(int fd, size_t size, std::string* out) {
  out->resize(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, out->data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("measurement-worker pipe: {}", std::strerror(errno));
    if (n == 0) {
      if (done == 0) return NotFound("end of the measurement-worker pipe");
      return IoError("measurement-worker pipe closed inside a frame");
    }
    done += static_cast<size_t>(n);
  }
  return Status();
}

}  // namespace

Status WriteFrame(int fd, const std::string& payload) {
  const std::string bytes = FrameHeader(payload.size()) + payload;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("measurement-worker pipe: {}", std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status();
}

StatusOr<std::string> ReadFrame(int fd) {
  std::string header;
  COLLAGE_RETURN_IF_ERROR(ReadExactly(fd, 4, &header));
  COLLAGE_ASSIGN_OR_RETURN(uint32_t size, FrameLength(header));
  std::string payload;
  Status s = ReadExactly(fd, size, &payload);
  if (s.code() == StatusCode::kNotFound)
    return IoError("measurement-worker pipe closed inside a frame");
  COLLAGE_RETURN_IF_ERROR(s);
  return payload;
}

StatusOr<TensorType> TensorTypeFromText(const std::string& text) {
  const size_t open = text.find('[');
  if (open == std::string::npos || text.empty() || text.back() != ']') {
    return InvalidArgument("'{}' is not a tensor type (expected e.g. float32[1x8x4x4])", text);
  }
  TensorType type;
  const std::string name = text.substr(0, open);
  for (int code = 1; code < 32 && type.dtype == DType::kUndefined; ++code) {
    if (name == DTypeName(static_cast<DType>(code))) type.dtype = static_cast<DType>(code);
  }
  if (type.dtype == DType::kUndefined)
    return InvalidArgument("'{}': unknown element type '{}'", text, name);
  const std::string dims = text.substr(open + 1, text.size() - open - 2);
  if (!dims.empty()) {
    COLLAGE_ASSIGN_OR_RETURN(type.shape, ParseShape(dims));
  }
  return type;
}

}  // namespace collage
