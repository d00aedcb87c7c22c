#include "unsupported_reason.h"

#include <algorithm>
#include <regex>

namespace collage::conformance {
namespace {

std::string Trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t\r-*");
  if (begin == std::string::npos) return "";
  const size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

// Drops "<anything>.onnx: " (the model's path, different in every case).
std::string DropModelPath(std::string s) {
  const size_t at = s.find(".onnx: ");
  if (at != std::string::npos) s.erase(0, at + 7);
  return s;
}

// "node 'conv_1'" → "node '…'" (also "node \"x\""): node names differ from case to case.
std::string HideNodeNames(const std::string& s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t at = s.find("node ", i);
    if (at == std::string::npos || at + 5 >= s.size() || (s[at + 5] != '\'' && s[at + 5] != '"')) {
      const size_t stop = at == std::string::npos ? s.size() : at + 5;
      out.append(s, i, stop - i);
      i = stop;
      continue;
    }
    const char quote = s[at + 5];
    const size_t close = s.find(quote, at + 6);
    if (close == std::string::npos) {
      out.append(s, i, std::string::npos);
      break;
    }
    out.append(s, i, at + 5 - i);
    out += quote;
    out += "...";
    out += quote;
    i = close + 1;
  }
  return out;
}

// The loader lists every unsupported op type of a model in one line,
//   "3 unsupported op types: Loop (node '...'), SequenceEmpty (node '...'), ..."
// which is counted once per op type, so the histogram says how many cases each op would unlock
// (in part: a case may need several).
bool SplitOpTypeList(const std::string& line, std::vector<std::string>& keys) {
  static const std::regex kList(R"(^\d+ unsupported op types?: (.*)$)");
  static const std::regex kItem(R"(([^ ,()]+) \(node '\.\.\.'\))");
  std::smatch list;
  if (!std::regex_match(line, list, kList)) return false;
  const std::string items = list[1].str();
  bool any = false;
  for (std::sregex_iterator it(items.begin(), items.end(), kItem), end; it != end; ++it) {
    const std::string key = "unsupported op type " + (*it)[1].str();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    any = true;
  }
  return any;
}

}  // namespace

std::vector<std::string> UnsupportedReasonKeys(const std::string& message) {
  std::vector<std::string> keys;
  size_t start = 0;
  const std::string body = DropModelPath(message);
  while (start <= body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    std::string line = Trim(HideNodeNames(body.substr(start, end - start)));
    // A heading that only introduces the list ("3 problems:") is no reason by itself.
    const bool heading = !line.empty() && line.back() == ':' && end != body.size();
    if (!line.empty() && !heading && !SplitOpTypeList(line, keys) &&
        std::find(keys.begin(), keys.end(), line) == keys.end()) {
      keys.push_back(line);
    }
    start = end + 1;
  }
  if (keys.empty()) keys.push_back("(no message)");
  return keys;
}

}  // namespace collage::conformance
