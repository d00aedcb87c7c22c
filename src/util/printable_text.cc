#include "collage/printable_text.h"

#include <fmt/format.h>

namespace collage {

std::string PrintableText(std::string_view text, std::string_view keep) {
  std::string printable;
  printable.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 || byte == 0x7F) && keep.find(c) == std::string_view::npos) {
      printable += fmt::format("\\x{:02x}", byte);
    } else {
      printable += c;
    }
  }
  return printable;
}

std::string PrintableExcerpt(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return PrintableText(text);
  return PrintableText(text.substr(0, max_bytes)) +
         fmt::format("... ({} more bytes)", text.size() - max_bytes);
}

}  // namespace collage
