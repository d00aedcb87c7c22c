// Text from untrusted files (names in a damaged model, a .npy header) shown to a person: its
// control bytes written as \xNN, so that nothing a file holds reaches the terminal raw.
#pragma once

#include <string>
#include <string_view>

namespace collage {

// Every byte below 0x20 and 0x7F as \xNN, except the line breaks and tabs listed in `keep`.
std::string PrintableText(std::string_view text, std::string_view keep = "");

// PrintableText of at most the first `max_bytes` bytes of `text`, with a note of how much was
// left out: a reason read from a cost database may be megabytes.
std::string PrintableExcerpt(std::string_view text, size_t max_bytes);

}  // namespace collage
