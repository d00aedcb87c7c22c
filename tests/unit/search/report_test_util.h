// What the placement report's tests share: a placement of a small residual model (one group
// per node, or with a two-level region in the middle) with a profiled run that made layout
// conversions, and reading the SVG the report draws back as XML (libxml2).
#pragma once

#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <memory>
#include <string>
#include <vector>

#include "collage/optimize.h"
#include "collage/session.h"
#include "optimize_test_util.h"

namespace collage::testing {

// `blocks` Conv → Relu → Add blocks, one group per node on onednn, xnnpack, native in turn;
// with `region`, the nodes between the first and the last form one onnxruntime region (as
// the two-level search makes them: no cost of its own).
struct ReportFixture {
  Graph graph;
  OptimizeReport report;
  RunProfile in_run;
  std::string converted_value;  // the first Conv's output, converted before the first Relu
};

inline std::string ValueName(const Graph& graph, int node) {
  return graph.value(graph.node(node).outputs[0]).name;
}

inline ReportFixture MakeReportFixture(int blocks, bool region) {
  ReportFixture f;
  f.graph = RepeatedBlocks(blocks);
  const char* backends[] = {"onednn", "xnnpack", "native"};
  const int last = f.graph.num_nodes() - 1;
  for (int n = 0; n <= last; ++n) {
    GroupReport group;
    if (region && n > 0 && n < last) {
      if (n == 1) {
        group.backend = "onnxruntime";
        group.rule = "region";
        group.measured_alone = false;
        group.in_run_ms = 1.5;
        for (int m = 1; m < last; ++m) group.nodes.push_back(m);
        f.report.groups.push_back(group);
      }
      continue;
    }
    group.backend = backends[n % 3];
    group.rule = "rule" + std::to_string(n);
    group.nodes = {n};
    group.cost_ms = 0.2;
    group.in_run_ms = 0.35;
    f.report.groups.push_back(group);
  }
  f.report.estimated_ms = 0.2 * static_cast<double>(f.report.groups.size());
  f.converted_value = ValueName(f.graph, 0);
  for (size_t g = 0; g < f.report.groups.size(); ++g) {
    const GroupReport& group = f.report.groups[g];
    if (g == 0) {  // the model input, converted for the first group
      f.in_run.nodes.push_back(ConversionStep("x", "onednn", "plain", "nChw8c", 0.0042));
    }
    if (g == 1) {  // the first Conv's output, converted for the group after it
      f.in_run.nodes.push_back(
          ConversionStep(f.converted_value, "xnnpack", "nChw8c", "nhwc", 0.045));
    }
    NodeTiming step;
    step.node_name = f.graph.node(group.nodes.front()).name;
    step.op_type = f.graph.node(group.nodes.front()).op_type;
    step.backend = group.backend;
    step.rule = group.rule;
    step.milliseconds = group.in_run_ms;
    step.group = static_cast<int>(g);
    f.in_run.nodes.push_back(step);
  }
  return f;
}

// The first <svg>...</svg> element of `html`.
inline std::string SvgOf(const std::string& html) {
  const size_t begin = html.find("<svg xmlns");
  const size_t end = html.find("</svg>", begin);
  if (begin == std::string::npos || end == std::string::npos) return "";
  return html.substr(begin, end + 6 - begin);
}

struct XmlDocDeleter {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
using XmlDoc = std::unique_ptr<xmlDoc, XmlDocDeleter>;

// Null when `text` is not well-formed XML.
inline XmlDoc ParseXml(const std::string& text) {
  return XmlDoc(xmlReadMemory(text.data(), static_cast<int>(text.size()), "report.svg", "UTF-8",
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
}

inline std::string Attr(xmlNode* node, const char* name) {
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  if (value == nullptr) return "";
  std::string text(reinterpret_cast<const char*>(value));
  xmlFree(value);
  return text;
}

inline std::string Name(xmlNode* node) { return reinterpret_cast<const char*>(node->name); }

// All text inside `node`.
inline std::string Text(xmlNode* node) {
  xmlChar* content = xmlNodeGetContent(node);
  if (content == nullptr) return "";
  std::string text(reinterpret_cast<const char*>(content));
  xmlFree(content);
  return text;
}

// Every element below `node` (depth first) with tag `tag` ("" any) and class `cls` ("" any).
inline void Collect(xmlNode* node, const std::string& tag, const std::string& cls,
                    std::vector<xmlNode*>& out) {
  for (xmlNode* child = node->children; child != nullptr; child = child->next) {
    if (child->type != XML_ELEMENT_NODE) continue;
    if ((tag.empty() || Name(child) == tag) && (cls.empty() || Attr(child, "class") == cls))
      out.push_back(child);
    Collect(child, tag, cls, out);
  }
}
inline std::vector<xmlNode*> Find(xmlNode* node, const std::string& tag,
                                  const std::string& cls = "") {
  std::vector<xmlNode*> out;
  Collect(node, tag, cls, out);
  return out;
}

}  // namespace collage::testing
