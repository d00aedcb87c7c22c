// Small pieces of text and colour the placement report is made of, shared by its page, its
// built-in graph layout and its Graphviz input so that all three say and show the same.
#pragma once

#include <string>

namespace collage {

// `text` with the five XML special characters escaped: safe inside HTML, SVG and attributes.
std::string XmlEscape(const std::string& text);

// A duration at a scale a reader takes in at once: "850 ns", "4.2 µs", "120 µs", "3.40 ms",
// "1.25 s". Never "0 us" for a short step: 0 itself is "0".
std::string FormatDuration(double milliseconds);

// The fill colour of a backend: grey for native; a colour of a fixed palette for each backend
// of the registry, given in registration order, so that a backend looks the same in every
// report of a build; and a colour derived from the name (the same on every run and machine)
// for a backend past the palette or not registered in this process.
std::string BackendColour(const std::string& backend);

// Black or white, whichever reads better on `fill` ("#rrggbb").
std::string TextColourOn(const std::string& fill);

// `text` cut to `max_chars` characters (UTF-8 aware), ending in "…" when cut.
std::string Shorten(const std::string& text, size_t max_chars);

}  // namespace collage
