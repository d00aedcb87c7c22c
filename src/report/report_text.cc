#include "report/report_text.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <iterator>

#include "collage/available_backends.h"
#include "collage/native_backend.h"
#include "collage/sdk/backend.h"
#include "util/stable_hash.h"

namespace collage {

std::string XmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string FormatDuration(double milliseconds) {
  if (!std::isfinite(milliseconds)) return "-";
  if (milliseconds == 0) return "0";
  const double ms = std::fabs(milliseconds);
  const char* sign = milliseconds < 0 ? "-" : "";
  if (ms >= 1000) return fmt::format("{}{:.2f} s", sign, ms / 1000);
  if (ms >= 1) return fmt::format("{}{:.2f} ms", sign, ms);
  const double us = ms * 1000;
  if (us >= 10) return fmt::format("{}{:.0f} µs", sign, us);
  if (us >= 1) return fmt::format("{}{:.1f} µs", sign, us);
  const double ns = us * 1000;
  if (ns >= 1) return fmt::format("{}{:.0f} ns", sign, ns);
  return fmt::format("{}< 1 ns", sign);
}

namespace {

// HSL (hue in degrees, saturation and lightness in 0..1) as "#rrggbb".
std::string HslColour(double hue, double saturation, double lightness) {
  const double chroma = (1 - std::fabs(2 * lightness - 1)) * saturation;
  const double h = std::fmod(hue, 360.0) / 60.0;
  const double x = chroma * (1 - std::fabs(std::fmod(h, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (h < 1)
    r = chroma, g = x;
  else if (h < 2)
    r = x, g = chroma;
  else if (h < 3)
    g = chroma, b = x;
  else if (h < 4)
    g = x, b = chroma;
  else if (h < 5)
    r = x, b = chroma;
  else
    r = chroma, b = x;
  const double m = lightness - chroma / 2;
  auto byte = [&](double v) { return static_cast<int>(std::lround((v + m) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b));
}

}  // namespace

std::string BackendColour(const std::string& backend) {
  // The reference kernels are the background every other backend stands out from.
  if (backend == kNativeBackend) return "#9e9e9e";
  // Tableau's ten categorical colours without their grey, then their light variants: distinct
  // at a glance and readable with black or white text.
  static constexpr const char* kPalette[] = {
      "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
      "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
      "#dbdb8d", "#9edae5"};
  // Registry order (native first, then the built-in backends by folder name, then plug-ins)
  // is the same on every run of a build, so each backend keeps its colour from report to report.
  size_t slot = 0;
  for (const Backend* registered : GlobalBackendRegistry().backends()) {
    if (registered->name() == kNativeBackend) continue;
    if (registered->name() == backend) {
      if (slot < std::size(kPalette)) return kPalette[slot];
      break;
    }
    ++slot;
  }
  // Past the palette or not registered here (a plan read from another machine's build):
  // mid saturation and lightness, distinct from the palette's primaries, readable text on it.
  return HslColour(static_cast<double>(StableHash(backend) % 360), 0.45, 0.62);
}

std::string TextColourOn(const std::string& fill) {
  if (fill.size() != 7 || fill[0] != '#') return "#000000";
  const auto channel = [&](size_t at) {
    return std::stoi(fill.substr(at, 2), nullptr, 16) / 255.0;
  };
  // Relative luminance (sRGB weights, without the gamma curve: close enough to pick a side).
  const double luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return luminance > 0.55 ? "#000000" : "#ffffff";
}

std::string Shorten(const std::string& text, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (chars == max_chars - 1 && max_chars > 0) {
      // Fits when what is left is this one character.
      size_t next = i + 1;
      while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
      if (next == text.size()) return text;
      return text.substr(0, i) + "…";
    }
    ++chars;
  }
  return text;
}

}  // namespace collage
