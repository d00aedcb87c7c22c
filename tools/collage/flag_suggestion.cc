#include "flag_suggestion.h"

#include <algorithm>
#include <vector>

#include "collage/printable_text.h"

namespace collage::cli {
namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The long names ("--shape") of the command's flags, --help included.
std::vector<std::string> LongFlags(const CLI::App& command) {
  std::vector<std::string> flags;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
  }
  return flags;
}

}  // namespace

std::string UnknownFlag(CLI::App& app, int argc, char** argv) {
  CLI::App* command = &app;
  std::string path = "collage";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.rfind("--", 0) != 0) {
      // A subcommand's name moves on to it; anything else is a value or a positional.
      for (CLI::App* sub : command->get_subcommands(nullptr)) {
        if (sub->get_name() == word) {
          command = sub;
          path += " " + word;
        }
      }
      continue;
    }
    const std::string flag = word.substr(0, word.find('='));
    const std::vector<std::string> known = LongFlags(*command);
    if (flag == "--" || std::find(known.begin(), known.end(), flag) != known.end()) continue;
    std::string nearest;
    size_t best = std::max<size_t>(2, flag.size() / 4) + 1;  // a typo or two, not another word
    for (const std::string& candidate : known) {
      const size_t distance = EditDistance(flag, candidate);
      if (distance < best) {
        best = distance;
        nearest = candidate;
      }
    }
    std::string text = "unknown flag '" + PrintableText(flag) + "' for `" + path + "`";
    if (!nearest.empty()) return text + "; did you mean " + nearest + "?";
    std::string all;
    for (const std::string& candidate : known) all += (all.empty() ? "" : ", ") + candidate;
    return text + " (its flags: " + all + ")";
  }
  return "";
}

}  // namespace collage::cli
