#include "search/report_dot.h"

#include <sstream>

#include <fmt/format.h>

#include "search/report_text.h"
#include "util/errors.h"
#include "util/subprocess.h"

namespace collage {
namespace {

// Far more than any report's graph makes: a runaway dot is stopped, not buffered.
constexpr size_t kMaxSvgBytes = size_t{64} << 20;

// A dot "quoted string": backslashes and quotes escaped, newlines as dot's \n.
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A dot HTML-like label: the first line bold, each line escaped as XML.
std::string HtmlLabel(const std::vector<std::string>& lines, bool bold_first) {
  std::string label = "<";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) label += "<BR/>";
    label += i == 0 && bold_first ? "<B>" + XmlEscape(lines[i]) + "</B>" : XmlEscape(lines[i]);
  }
  return label + ">";
}

}  // namespace

std::string ReportGraphDot(const ReportGraph& graph) {
  std::string dot =
      "digraph placement {\n"
      "  graph [rankdir=TB, nodesep=0.3, ranksep=0.4, fontname=\"sans-serif\", fontsize=12, "
      "bgcolor=\"transparent\"];\n"
      "  node [shape=box, style=\"rounded,filled\", fontname=\"sans-serif\", fontsize=11, "
      "margin=\"0.12,0.05\", color=\"#333333\"];\n"
      "  edge [color=\"#777777\", arrowsize=0.8, fontname=\"sans-serif\", fontsize=10];\n";
  for (size_t c = 0; c < graph.clusters.size(); ++c) {
    const ReportCluster& cluster = graph.clusters[c];
    dot += fmt::format(
        "  subgraph cluster_{} {{\n    label={}; labeljust=l; style=\"rounded,dashed,filled\"; "
        "penwidth=2; color={}; fillcolor={};\n",
        c, HtmlLabel(cluster.lines, true), Quoted(cluster.colour), Quoted(cluster.colour + "1f"));
    for (size_t b = 0; b < graph.boxes.size(); ++b) {
      if (graph.boxes[b].cluster == static_cast<int>(c)) dot += fmt::format("    b{};\n", b);
    }
    dot += "  }\n";
  }
  for (size_t b = 0; b < graph.boxes.size(); ++b) {
    const ReportBox& box = graph.boxes[b];
    dot += fmt::format("  b{} [label={}, fillcolor={}, fontcolor={}, tooltip={}{}];\n", b,
                       HtmlLabel(box.lines, !box.terminal), Quoted(box.fill),
                       Quoted(TextColourOn(box.fill)), Quoted(box.tooltip),
                       box.terminal ? ", style=\"rounded,filled\", color=\"#555555\"" : "");
  }
  for (const ReportEdge& edge : graph.edges) {
    dot += fmt::format("  b{} -> b{}", edge.from, edge.to);
    if (!edge.conversion.empty()) {
      std::vector<std::string> lines;
      std::stringstream text(edge.conversion);
      for (std::string line; std::getline(text, line);) lines.push_back(line);
      dot += fmt::format(" [label={}, color=\"#d35400\", fontcolor=\"#a04000\", penwidth=2]",
                         HtmlLabel(lines, false));
    }
    dot += ";\n";
  }
  return dot + "}\n";
}

std::string FindDot() { return FindOnPath("dot"); }

StatusOr<std::string> RunDot(const std::string& dot_path, const std::string& source,
                             std::chrono::milliseconds limit) {
  const auto deadline = Subprocess::Clock::now() + limit;
  COLLAGE_ASSIGN_OR_RETURN(auto dot, Subprocess::Spawn(dot_path, {"-Tsvg"}));
  const auto failed = [&](const std::string& what) {
    dot->Kill();
    const std::string tail = dot->stderr_tail();
    return IoError("'{} -Tsvg' {}{}{}", dot_path, what, tail.empty() ? "" : ": ", tail);
  };
  if (dot->Write(source, deadline) != Subprocess::Wait::kDone) {
    return failed("did not take the graph");
  }
  dot->CloseStdin();
  std::string output;
  const Subprocess::Wait read = dot->Read(kMaxSvgBytes, &output, deadline);
  if (read == Subprocess::Wait::kTimedOut) {
    return failed(fmt::format("took longer than {:.0f} s", limit.count() / 1000.0));
  }
  if (read == Subprocess::Wait::kInterrupted) return failed("was interrupted");
  if (read == Subprocess::Wait::kDone) return failed("wrote more than 64 MiB");
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Subprocess::Clock::now());
  const std::string ended = dot->WaitForExit(std::max(left, std::chrono::milliseconds(1)));
  if (ended != "exited with status 0") return failed(ended);
  // Keep the <svg> element: the XML declaration and DOCTYPE before it do not belong in a page.
  const size_t begin = output.find("<svg");
  const size_t end = output.rfind("</svg>");
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    return failed("wrote no SVG");
  }
  return output.substr(begin, end + 6 - begin) + "\n";
}

}  // namespace collage
