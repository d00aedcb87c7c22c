#include "report/report_dot.h"

#include <fmt/format.h>

#include <sstream>

#include "report/report_text.h"
#include "collage/sdk/errors.h"
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

// dot draws a cluster's label before the edges, so an edge entering the cluster runs over
// it: its texts move to the end of the drawing, inside <g class="cluster-title">, with a white
// halo. Left as it is when the output is not shaped as expected.
std::string RaiseClusterTitles(const std::string& svg) {
  std::string out, raised;
  size_t at = 0;
  while (true) {
    const size_t cluster = svg.find("class=\"cluster\"", at);
    const size_t end = cluster == std::string::npos ? std::string::npos : svg.find("</g>", cluster);
    if (end == std::string::npos) break;
    size_t copied = at;
    for (size_t text = svg.find("<text", cluster); text != std::string::npos && text < end;
         text = svg.find("<text", text)) {
      const size_t close = svg.find("</text>", text);
      if (close == std::string::npos || close > end) break;
      out += svg.substr(copied, text - copied);
      raised += "<text stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"" +
                svg.substr(text + 5, close + 7 - (text + 5)) + "\n";
      copied = text = close + 7;
    }
    out += svg.substr(copied, end - copied);
    at = end;
  }
  out += svg.substr(at);
  const size_t last_group = out.rfind("</g>");
  if (raised.empty() || last_group == std::string::npos) return svg;
  return out.insert(last_group, "<g class=\"cluster-title\">\n" + raised + "</g>\n");
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
  // Ends dot (at once, or after `grace` for it to exit by itself) and says why it failed,
  // with what it wrote to stderr.
  const auto failed = [&](std::string what, std::chrono::milliseconds grace) {
    const std::string ended = dot->WaitForExit(grace);
    if (grace.count() > 0) what += what.empty() ? ended : " (" + ended + ")";
    const std::string tail = dot->stderr_tail();
    return IoError("'{} -Tsvg' {}{}{}", dot_path, what, tail.empty() ? "" : ": ", tail);
  };
  constexpr std::chrono::milliseconds kNow(0), kGrace(1000);
  if (dot->Write(source, deadline) != Subprocess::Wait::kDone) {
    return failed("did not take the graph", kGrace);
  }
  dot->CloseStdin();
  std::string output;
  const Subprocess::Wait read = dot->Read(kMaxSvgBytes, &output, deadline);
  if (read == Subprocess::Wait::kTimedOut) {
    return failed(fmt::format("took longer than {:.1f} s", limit.count() / 1000.0), kNow);
  }
  if (read == Subprocess::Wait::kInterrupted) return failed("was interrupted", kNow);
  if (read == Subprocess::Wait::kDone) return failed("wrote more than 64 MiB", kNow);
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Subprocess::Clock::now());
  const std::string ended = dot->WaitForExit(std::max(left, std::chrono::milliseconds(1)));
  if (ended != "exited with status 0") {
    const std::string tail = dot->stderr_tail();
    return IoError("'{} -Tsvg' {}{}{}", dot_path, ended, tail.empty() ? "" : ": ", tail);
  }
  // Keep the <svg> element: the XML declaration and DOCTYPE before it do not belong in a page.
  const size_t begin = output.find("<svg");
  const size_t end = output.rfind("</svg>");
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    return IoError("'{} -Tsvg' wrote no SVG", dot_path);
  }
  return RaiseClusterTitles(output.substr(begin, end + 6 - begin)) + "\n";
}

}  // namespace collage
