#include "collage/device_fingerprint.h"

#include <fmt/format.h>
#include <sys/utsname.h>

#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "runtime/threading.h"

namespace collage {
namespace {

// The extensions whose presence changes which kernels oneDNN, XNNPACK and OpenBLAS pick.
const std::vector<std::string>& RelevantFlags() {
  static const std::vector<std::string> flags = {
      "sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
      "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "asimd", "sve", "sve2"};
  return flags;
}

std::string Trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t");
  size_t end = s.find_last_not_of(" \t");
  return begin == std::string::npos ? std::string() : s.substr(begin, end - begin + 1);
}

std::string Fingerprint() {
  std::string model = "unknown cpu";
  std::set<std::string> present;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string field = Trim(line.substr(0, colon));
    std::string value = Trim(line.substr(colon + 1));
    if ((field == "model name" || field == "Model" || field == "CPU part") && model == "unknown cpu") {
      model = value;
    } else if ((field == "flags" || field == "Features") && present.empty()) {
      std::istringstream words(value);
      for (std::string w; words >> w;) present.insert(w);
    }
  }
  std::string flags;
  for (const std::string& flag : RelevantFlags()) {
    if (present.count(flag)) flags += (flags.empty() ? "" : " ") + flag;
  }
  utsname name{};
  std::string arch = ::uname(&name) == 0 ? name.machine : "unknown";
  return fmt::format("{} | {} | {} | {} cpus", arch, model, flags.empty() ? "-" : flags,
                     ResolveThreadCount(0));
}

}  // namespace

const std::string& DeviceFingerprint() {
  static const std::string fingerprint = Fingerprint();
  return fingerprint;
}

std::string DeviceResourceName(const std::string& fingerprint) {
  // FNV-1a, 64 bits: written out rather than std::hash, whose value may differ between
  // standard libraries, and the name must match between machines.
  uint64_t hash = 14695981039346656037ull;
  for (const char c : fingerprint) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 1099511628211ull;
  }
  return fmt::format("collage-device-{:016x}", hash);
}

}  // namespace collage
