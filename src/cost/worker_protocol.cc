#include "cost/worker_protocol.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "collage/sdk/errors.h"
#include "collage/shape_text.h"

namespace collage {
namespace {

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

// Little-endian whatever the host, so that the bytes mean the same on every machine.
class Writer {
 public:
  explicit Writer(WorkerMessage kind) { U8(static_cast<uint8_t>(kind)); }
  void U8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void F64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    U64(bits);
  }
  void Text(const std::string& s) {
    U32(static_cast<uint32_t>(s.size()));
    bytes_ += s;
  }
  void Settings(const MeasureSettings& s) {
    I32(s.warmup_runs);
    I32(s.min_runs);
    I32(s.max_runs);
    F64(s.max_seconds);
    F64(s.target_spread);
    U64(s.scrub_bytes);
  }
  std::string Take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

// Reads fields in order; the first short read poisons it, and Finish says what failed.
class Reader {
 public:
  Reader(const std::string& payload, WorkerMessage kind, const char* what)
      : payload_(payload), what_(what) {
    if (U8() != static_cast<uint8_t>(kind)) failed_ = true;
  }
  uint8_t U8() { return static_cast<uint8_t>(Take(1)[0]); }
  uint32_t U32() {
    const char* p = Take(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
    return v;
  }
  uint64_t U64() {
    const char* p = Take(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
    return v;
  }
  int32_t I32() { return static_cast<int32_t>(U32()); }
  double F64() {
    const uint64_t bits = U64();
    double v;
    std::memcpy(&v, &bits, sizeof(v));
    return v;
  }
  std::string Text() {
    const uint32_t size = U32();
    if (failed_ || size > payload_.size() - pos_) {
      failed_ = true;
      return "";
    }
    std::string s = payload_.substr(pos_, size);
    pos_ += size;
    return s;
  }
  // A count of items that each take at least `min_item_bytes`: bounded by what is left, so
  // that a damaged count cannot make us allocate gigabytes.
  uint32_t Count(size_t min_item_bytes) {
    const uint32_t n = U32();
    if (failed_ || n > (payload_.size() - pos_) / min_item_bytes) {
      failed_ = true;
      return 0;
    }
    return n;
  }
  MeasureSettings Settings() {
    MeasureSettings s;
    s.warmup_runs = I32();
    s.min_runs = I32();
    s.max_runs = I32();
    s.max_seconds = F64();
    s.target_spread = F64();
    s.scrub_bytes = static_cast<size_t>(U64());
    return s;
  }
  Status Finish() const {
    if (failed_ || pos_ != payload_.size()) {
      return InvalidArgument("malformed measurement-worker {} message ({} bytes)", what_,
                             payload_.size());
    }
    return Status();
  }

 private:
  const char* Take(size_t n) {
    static const char kZeros[8] = {};
    if (failed_ || n > payload_.size() - pos_) {
      failed_ = true;
      return kZeros;
    }
    const char* p = payload_.data() + pos_;
    pos_ += n;
    return p;
  }
  const std::string& payload_;
  const char* what_;
  size_t pos_ = 0;
  bool failed_ = false;
};

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

std::string EncodeRecord(const CostRecord& record) {
  Writer w(WorkerMessage::kRecord);
  w.U8(record.valid ? 1 : 0);
  w.Text(record.reason);
  w.F64(record.median_ms);
  w.F64(record.p90_ms);
  w.I32(record.samples);
  for (const std::vector<Layout>* layouts : {&record.input_layouts, &record.output_layouts}) {
    w.U32(static_cast<uint32_t>(layouts->size()));
    for (const Layout& layout : *layouts) w.Text(LayoutToText(layout));
  }
  return w.Take();
}

StatusOr<WorkerMessage> PayloadKind(const std::string& payload) {
  if (!payload.empty()) {
    switch (static_cast<WorkerMessage>(payload[0])) {
      case WorkerMessage::kHello:
      case WorkerMessage::kCandidate:
      case WorkerMessage::kConversion:
      case WorkerMessage::kRecord: return static_cast<WorkerMessage>(payload[0]);
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
  record.valid = r.U8() != 0;
  record.reason = r.Text();
  record.median_ms = r.F64();
  record.p90_ms = r.F64();
  record.samples = r.I32();
  for (std::vector<Layout>* layouts : {&record.input_layouts, &record.output_layouts}) {
    for (uint32_t n = r.Count(4); n > 0; --n) {
      const std::string text = r.Text();
      auto layout = LayoutFromText(text);
      if (!layout.ok())
        return InvalidArgument("measurement-worker record: {}", layout.status().message());
      layouts->push_back(*layout);
    }
  }
  COLLAGE_RETURN_IF_ERROR(r.Finish());
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
