// The field encoding shared by the measurement worker's messages (cost/worker_protocol.h)
// and the Ray dispatcher's envelope (cost/dispatch_protocol.h): one writer and one reader,
// so that both speak exactly the same bytes. Internal to those two .cc files.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "collage/sdk/errors.h"
#include "cost/measure.h"
#include "cost/worker_protocol.h"

namespace collage::wire {

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
  // Every byte not read yet: a payload nested at the end of this one.
  std::string Rest() {
    if (failed_) return "";
    std::string rest = payload_.substr(pos_);
    pos_ = payload_.size();
    return rest;
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

}  // namespace collage::wire
