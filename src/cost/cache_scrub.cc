#include "cost/cache_scrub.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace collage {
namespace {

constexpr size_t kLine = 64;

// "32768K" / "32M" / "1024" (bytes) → bytes; 0 when unreadable.
size_t ParseCacheSize(const std::string& text) {
  size_t value = 0;
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    value = value * 10 + static_cast<size_t>(text[i++] - '0');
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) value <<= 10;
  if (i < text.size() && (text[i] == 'M' || text[i] == 'm')) value <<= 20;
  return value;
}

}  // namespace

size_t LastLevelCacheBytes() {
  static const size_t bytes = [] {
    size_t largest = 0;
    for (int index = 0; index < 8; ++index) {
      std::ifstream file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) +
                         "/size");
      std::string text;
      if (file >> text) largest = std::max(largest, ParseCacheSize(text));
    }
    return largest > 0 ? largest : size_t{32} << 20;
  }();
  return bytes;
}

size_t RunFootprintBytes(const Graph& graph) {
  // Constants are all read once per run; computed values share the executable's arena, so
  // they touch no more than the most bytes live at once (nodes in topological order, a value
  // live from its producer to its last consumer, graph outputs to the end).
  size_t constants = 0;
  std::vector<NodeId> last_use(static_cast<size_t>(graph.num_values()), -1);
  for (ValueId v = 0; v < graph.num_values(); ++v) {
    const Value& value = graph.value(v);
    if (value.is_constant()) {
      constants += value.type.nbytes();
      continue;
    }
    for (NodeId consumer : value.consumers) last_use[static_cast<size_t>(v)] = std::max(last_use[static_cast<size_t>(v)], consumer);
  }
  for (ValueId out : graph.outputs()) last_use[static_cast<size_t>(out)] = graph.num_nodes();
  size_t live = 0, peak = 0;
  for (ValueId in : graph.inputs()) live += graph.value(in).type.nbytes();
  std::vector<std::vector<ValueId>> ending(static_cast<size_t>(graph.num_nodes()) + 1);
  for (ValueId v = 0; v < graph.num_values(); ++v) {
    if (last_use[static_cast<size_t>(v)] >= 0) ending[static_cast<size_t>(last_use[static_cast<size_t>(v)])].push_back(v);
  }
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    for (ValueId out : graph.node(n).outputs) {
      if (out != kNoValue) live += graph.value(out).type.nbytes();
    }
    peak = std::max(peak, live);
    for (ValueId v : ending[static_cast<size_t>(n)]) live -= std::min(live, graph.value(v).type.nbytes());
  }
  peak = std::max(peak, live);
  return std::min(constants + peak, 2 * LastLevelCacheBytes());
}

void ScrubCaches(size_t bytes, bool on_openmp_team) {
  if (bytes == 0) return;
  // One buffer for the process, grown as needed; scrubs are not run concurrently by design
  // (a measurement owns the machine), the mutex only keeps a second caller safe.
  static std::mutex mutex;
  static std::vector<uint8_t> buffer;
  std::lock_guard<std::mutex> lock(mutex);
  if (buffer.size() < bytes) buffer.resize(bytes, 1);
  uint8_t* data = buffer.data();
  const int64_t lines = static_cast<int64_t>(bytes / kLine);
#pragma omp parallel for schedule(static) if (on_openmp_team)
  for (int64_t line = 0; line < lines; ++line) data[line * static_cast<int64_t>(kLine)] += 1;
}

void TouchBytes(const void* data, size_t bytes) {
  const volatile uint8_t* p = static_cast<const uint8_t*>(data);
  uint8_t sink = 0;
  for (size_t i = 0; i < bytes; i += kLine) sink ^= p[i];
  (void)sink;
}

}  // namespace collage
