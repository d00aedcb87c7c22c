// "did you mean": a flag the command does not take, and the one of its flags nearest in
// spelling (`collage run m.onnx --shpe x=1` → "did you mean --shape?").
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace collage::cli {

// For the first word of argv that starts with "--" and is no flag of the command it follows:
// "unknown flag '--shpe' for `collage run`; did you mean --shape?" (or the command's flags
// where none is near). Empty when every flag given is known.
std::string UnknownFlag(CLI::App& app, int argc, char** argv);

}  // namespace collage::cli
