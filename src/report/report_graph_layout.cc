#include "report/report_graph_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "report/report_text.h"

namespace collage {
namespace {

constexpr double kCharWidth = 7.0;  // 12 px sans-serif, a little generous
constexpr double kLineHeight = 15;
constexpr double kBoxPadding = 8;
constexpr double kLaneWidth = 14;   // what an edge passing through a layer takes
constexpr double kItemGap = 16;     // between neighbours in a layer
constexpr double kLayerGap = 46;    // between layers, for the curves
constexpr double kClusterPad = 12;  // inside a cluster's frame
constexpr double kClusterGap = 36;  // between a cluster's frame and what is beside it
constexpr double kMargin = 16;
constexpr int kOrderingSweeps = 12;
constexpr int kPlacementSweeps = 8;

double TextWidth(const std::string& line) {
  size_t chars = 0;  // UTF-8 characters, not bytes
  for (unsigned char c : line) chars += (c & 0xC0) != 0x80;
  return static_cast<double>(chars) * kCharWidth;
}

// A box, or the lane of an edge through a layer between its ends.
struct Item {
  int box = -1;  // -1: a lane
  int layer = 0;
  int cluster = -1;
  double width = 0;
  double height = 0;
  double x = 0;               // centre
  std::vector<int> up, down;  // neighbouring items in the layers above and below
};

struct Label {
  std::vector<std::string> lines;
  double x = 0, y = 0;  // centre
  double width = 0, height = 0;
};

class Layout {
 public:
  explicit Layout(const ReportGraph& graph) : graph_(graph) {}

  std::string Svg() {
    AssignLayers();
    MakeItems();
    Order();
    PlaceHorizontally();
    PlaceVertically();
    return Draw();
  }

 private:
  // Longest path from the sources, in a topological order (Kahn's; a cycle, which a placement
  // cannot have, is broken at the lowest box left so that the drawing still ends). Then, from
  // the sinks up, every box moves down to just above its nearest reader: a box that only feeds
  // a late step (a slice of the input for the last time step) sits beside it, not at the top
  // with a long edge down.
  void AssignLayers() {
    const size_t n = graph_.boxes.size();
    std::vector<int> indegree(n, 0);
    std::vector<std::vector<int>> out(n);
    for (const ReportEdge& e : graph_.edges) {
      out[static_cast<size_t>(e.from)].push_back(e.to);
      ++indegree[static_cast<size_t>(e.to)];
    }
    layer_.assign(n, 0);
    std::vector<bool> done(n, false);
    std::vector<int> ready, order;
    for (size_t b = 0; b < n; ++b) {
      if (indegree[b] == 0) ready.push_back(static_cast<int>(b));
    }
    while (order.size() < n) {
      if (ready.empty()) {
        for (size_t b = 0; b < n; ++b) {
          if (!done[b]) {
            ready.push_back(static_cast<int>(b));
            break;
          }
        }
      }
      const int b = ready.front();
      ready.erase(ready.begin());
      if (done[static_cast<size_t>(b)]) continue;
      done[static_cast<size_t>(b)] = true;
      order.push_back(b);
      for (int to : out[static_cast<size_t>(b)]) {
        if (done[static_cast<size_t>(to)]) continue;
        layer_[static_cast<size_t>(to)] =
            std::max(layer_[static_cast<size_t>(to)], layer_[static_cast<size_t>(b)] + 1);
        if (--indegree[static_cast<size_t>(to)] == 0) ready.push_back(to);
      }
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const size_t b = static_cast<size_t>(*it);
      int nearest = std::numeric_limits<int>::max();
      for (int to : out[b]) {
        const int l = layer_[static_cast<size_t>(to)];
        if (l > layer_[b]) nearest = std::min(nearest, l);
      }
      if (nearest != std::numeric_limits<int>::max()) layer_[b] = nearest - 1;
    }
  }

  void MakeItems() {
    item_of_box_.resize(graph_.boxes.size());
    for (size_t b = 0; b < graph_.boxes.size(); ++b) {
      const ReportBox& box = graph_.boxes[b];
      Item item;
      item.box = static_cast<int>(b);
      item.layer = layer_[b];
      item.cluster = box.cluster;
      for (const std::string& line : box.lines)
        item.width = std::max(item.width, TextWidth(line) + 2 * kBoxPadding);
      item.height = static_cast<double>(box.lines.size()) * kLineHeight + kBoxPadding;
      item_of_box_[b] = AddItem(std::move(item));
    }
    for (const ReportEdge& e : graph_.edges) {
      std::vector<int> chain = {item_of_box_[static_cast<size_t>(e.from)]};
      const int from_layer = layer_[static_cast<size_t>(e.from)];
      const int to_layer = layer_[static_cast<size_t>(e.to)];
      const int from_cluster = graph_.boxes[static_cast<size_t>(e.from)].cluster;
      const bool inside =
          from_cluster >= 0 && from_cluster == graph_.boxes[static_cast<size_t>(e.to)].cluster;
      for (int l = from_layer + 1; l < to_layer; ++l) {
        Item lane;
        lane.layer = l;
        lane.cluster = inside ? from_cluster : -1;
        lane.width = kLaneWidth;
        chain.push_back(AddItem(std::move(lane)));
      }
      chain.push_back(item_of_box_[static_cast<size_t>(e.to)]);
      for (size_t k = 0; k + 1 < chain.size(); ++k) {
        items_[static_cast<size_t>(chain[k])].down.push_back(chain[k + 1]);
        items_[static_cast<size_t>(chain[k + 1])].up.push_back(chain[k]);
      }
      chains_.push_back(std::move(chain));
    }
  }

  int AddItem(Item item) {
    const int id = static_cast<int>(items_.size());
    if (static_cast<size_t>(item.layer) >= layers_.size())
      layers_.resize(static_cast<size_t>(item.layer) + 1);
    layers_[static_cast<size_t>(item.layer)].push_back(id);
    items_.push_back(std::move(item));
    return id;
  }

  // Barycentre sweeps down and up. A cluster's items stay together, clusters leftmost (their
  // frames then never cover anything else); the rest ordered by where their neighbours are.
  void Order() {
    position_.assign(items_.size(), 0);
    for (const std::vector<int>& layer : layers_) {
      for (size_t i = 0; i < layer.size(); ++i)
        position_[static_cast<size_t>(layer[i])] = static_cast<double>(i);
    }
    std::vector<double> key(items_.size());
    for (int sweep = 0; sweep < kOrderingSweeps; ++sweep) {
      const bool downward = sweep % 2 == 0;
      for (size_t step = 0; step < layers_.size(); ++step) {
        const size_t l = downward ? step : layers_.size() - 1 - step;
        std::vector<int>& layer = layers_[l];
        for (int id : layer) {
          const Item& item = items_[static_cast<size_t>(id)];
          const std::vector<int>& near = downward ? item.up : item.down;
          double sum = 0;
          for (int other : near) sum += position_[static_cast<size_t>(other)];
          key[static_cast<size_t>(id)] = near.empty() ? position_[static_cast<size_t>(id)]
                                                      : sum / static_cast<double>(near.size());
        }
        std::stable_sort(layer.begin(), layer.end(), [&](int a, int b) {
          const int ca = ClusterRank(a), cb = ClusterRank(b);
          if (ca != cb) return ca < cb;
          return key[static_cast<size_t>(a)] < key[static_cast<size_t>(b)];
        });
        for (size_t i = 0; i < layer.size(); ++i)
          position_[static_cast<size_t>(layer[i])] = static_cast<double>(i);
      }
    }
  }

  int ClusterRank(int id) const {
    const int c = items_[static_cast<size_t>(id)].cluster;
    return c < 0 ? std::numeric_limits<int>::max() : c;
  }

  // Every cluster gets a band of x of its own over the layers it spans (side by side with
  // clusters spanning the same layers); everything else in those layers goes right of it.
  // Within that, a few sweeps pull each item towards the mean of its neighbours, pushed apart
  // where they would overlap.
  void PlaceHorizontally() {
    const size_t num_clusters = graph_.clusters.size();
    cluster_lo_.assign(num_clusters, std::numeric_limits<int>::max());
    cluster_hi_.assign(num_clusters, -1);
    std::vector<std::vector<double>> width_in_layer(num_clusters,
                                                    std::vector<double>(layers_.size(), 0));
    for (const Item& item : items_) {
      if (item.cluster < 0) continue;
      const size_t c = static_cast<size_t>(item.cluster);
      cluster_lo_[c] = std::min(cluster_lo_[c], item.layer);
      cluster_hi_[c] = std::max(cluster_hi_[c], item.layer);
      double& width = width_in_layer[c][static_cast<size_t>(item.layer)];
      width += (width > 0 ? kItemGap : 0) + item.width;
    }
    cluster_left_.assign(num_clusters, 0);
    cluster_right_.assign(num_clusters, 0);
    std::vector<double> free_from(layers_.size(), kMargin);  // x where the unclustered begin
    for (size_t c = 0; c < num_clusters; ++c) {
      if (cluster_hi_[c] < 0) continue;
      double left = kMargin + kClusterPad;
      for (int l = cluster_lo_[c]; l <= cluster_hi_[c]; ++l)
        left = std::max(left, free_from[static_cast<size_t>(l)] + kClusterPad);
      // As wide as its widest layer, and as its title.
      double width = *std::max_element(width_in_layer[c].begin(), width_in_layer[c].end());
      for (const std::string& line : graph_.clusters[c].lines)
        width = std::max(width, TextWidth(line));
      cluster_left_[c] = left;
      cluster_right_[c] = left + width;
      for (int l = cluster_lo_[c]; l <= cluster_hi_[c]; ++l)
        free_from[static_cast<size_t>(l)] = cluster_right_[c] + kClusterPad + kClusterGap;
    }
    for (Item& item : items_) item.x = 0;
    for (int sweep = 0; sweep <= kPlacementSweeps; ++sweep) {
      if (sweep > 0) {
        std::vector<double> wanted(items_.size());
        for (size_t i = 0; i < items_.size(); ++i) {
          const Item& item = items_[i];
          double sum = 0;
          int count = 0;
          for (const std::vector<int>* near : {&item.up, &item.down}) {
            for (int other : *near) sum += items_[static_cast<size_t>(other)].x, ++count;
          }
          wanted[i] = count > 0 ? sum / count : item.x;
        }
        for (size_t i = 0; i < items_.size(); ++i) items_[i].x = wanted[i];
      }
      for (size_t l = 0; l < layers_.size(); ++l) PackLayer(l, free_from[l]);
    }
  }

  // Left to right: no overlap, nothing left of its band; then a cluster's items right to left
  // so that none ends right of its band (they fit: the band is as wide as its widest layer).
  void PackLayer(size_t l, double free_from) {
    const std::vector<int>& layer = layers_[l];
    double right = -std::numeric_limits<double>::infinity();
    int previous_cluster = -2;
    for (int id : layer) {
      Item& item = items_[static_cast<size_t>(id)];
      const double floor =
          item.cluster >= 0 ? cluster_left_[static_cast<size_t>(item.cluster)] : free_from;
      if (item.cluster != previous_cluster) right = -std::numeric_limits<double>::infinity();
      previous_cluster = item.cluster;
      const double left = std::max({item.x - item.width / 2, right + kItemGap, floor});
      item.x = left + item.width / 2;
      right = left + item.width;
    }
    double left_limit = std::numeric_limits<double>::infinity();
    previous_cluster = -2;
    for (auto it = layer.rbegin(); it != layer.rend(); ++it) {
      Item& item = items_[static_cast<size_t>(*it)];
      if (item.cluster < 0) continue;
      if (item.cluster != previous_cluster)
        left_limit = cluster_right_[static_cast<size_t>(item.cluster)] + kItemGap;
      previous_cluster = item.cluster;
      const double right_edge = std::min(item.x + item.width / 2, left_limit - kItemGap);
      item.x = right_edge - item.width / 2;
      left_limit = right_edge - item.width;
    }
  }

  // Layer tops: room between layers for the curves, a conversion's label, a cluster's title.
  void PlaceVertically() {
    std::vector<double> height(layers_.size(), 0);
    for (const Item& item : items_)
      height[static_cast<size_t>(item.layer)] =
          std::max(height[static_cast<size_t>(item.layer)], item.height);
    std::vector<double> label_room(layers_.size() + 1, 0);  // above layer l
    for (size_t e = 0; e < graph_.edges.size(); ++e) {
      const std::string& text = graph_.edges[e].conversion;
      if (text.empty()) continue;
      const double lines = static_cast<double>(std::count(text.begin(), text.end(), '\n') + 1);
      const size_t l = static_cast<size_t>(layer_[static_cast<size_t>(graph_.edges[e].to)]);
      label_room[l] = std::max(label_room[l], lines * 13 + 14);
    }
    std::vector<double> title_room(layers_.size() + 1, 0), bottom_room(layers_.size() + 1, 0);
    for (size_t c = 0; c < graph_.clusters.size(); ++c) {
      if (cluster_hi_[c] < 0) continue;
      const double title =
          static_cast<double>(graph_.clusters[c].lines.size()) * kLineHeight + kClusterPad;
      title_room[static_cast<size_t>(cluster_lo_[c])] =
          std::max(title_room[static_cast<size_t>(cluster_lo_[c])], title + kClusterPad);
      bottom_room[static_cast<size_t>(cluster_hi_[c]) + 1] = kClusterPad;
    }
    layer_top_.assign(layers_.size(), 0);
    layer_height_ = height;
    double y = kMargin;
    for (size_t l = 0; l < layers_.size(); ++l) {
      y += (l > 0 ? kLayerGap : 0) + label_room[l] + title_room[l] + bottom_room[l];
      layer_top_[l] = y;
      y += height[l];
    }
    total_height_ = y + kMargin + kClusterPad;
    total_width_ = 0;
    for (const Item& item : items_) total_width_ = std::max(total_width_, item.x + item.width / 2);
    for (double right : cluster_right_) total_width_ = std::max(total_width_, right + kClusterPad);
    total_width_ += kMargin;
  }

  double Top(int item) const {
    return layer_top_[static_cast<size_t>(items_[static_cast<size_t>(item)].layer)];
  }

  // Where an edge leaves (bottom) or enters (top) a box: the box's edges spread along its
  // side in the order of where they go, so that arrowheads never sit on one another.
  double PortX(size_t chain_index, bool leaving) const {
    const std::vector<int>& chain = chains_[chain_index];
    const int box_item = leaving ? chain.front() : chain.back();
    const Item& box = items_[static_cast<size_t>(box_item)];
    const std::vector<int>& sides = leaving ? box.down : box.up;
    const int neighbour = leaving ? chain[1] : chain[chain.size() - 2];
    std::vector<double> xs;
    xs.reserve(sides.size());
    for (int other : sides) xs.push_back(items_[static_cast<size_t>(other)].x);
    std::sort(xs.begin(), xs.end());
    const double x = items_[static_cast<size_t>(neighbour)].x;
    const size_t rank = static_cast<size_t>(std::lower_bound(xs.begin(), xs.end(), x) - xs.begin());
    const double usable = box.width * 0.7;
    if (xs.size() <= 1) return box.x;
    // Equal x (two edges to one box): spread them by their position among equals too.
    size_t same_before = 0;
    for (size_t k = 0; k < chain_index; ++k) {
      const std::vector<int>& other = chains_[k];
      const int other_box = leaving ? other.front() : other.back();
      const int other_neighbour = leaving ? other[1] : other[other.size() - 2];
      if (other_box == box_item && items_[static_cast<size_t>(other_neighbour)].x == x)
        ++same_before;
    }
    const double slot = static_cast<double>(std::min(rank + same_before, xs.size() - 1));
    return box.x - usable / 2 + usable * slot / static_cast<double>(xs.size() - 1);
  }

  std::string Draw() {
    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"placement-graph\" width=\"{0:.0f}\" "
        "height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\" "
        "font-size=\"12\">\n<defs>\n"
        "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" "
        "markerHeight=\"8\" markerUnits=\"userSpaceOnUse\" orient=\"auto\"><path d=\"M0,0 L10,5 "
        "L0,10 z\" fill=\"#555555\"/></marker>\n"
        "<marker id=\"arrow-conversion\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
        "markerWidth=\"9\" markerHeight=\"9\" markerUnits=\"userSpaceOnUse\" orient=\"auto\"><path "
        "d=\"M0,0 L10,5 L0,10 z\" fill=\"#d35400\"/></marker>\n</defs>\n",
        total_width_, total_height_);
    svg += DrawClusters(/*titles=*/false);
    std::vector<Label> labels;
    for (size_t e = 0; e < chains_.size(); ++e) svg += DrawEdge(e, labels);
    for (size_t b = 0; b < graph_.boxes.size(); ++b) svg += DrawBox(b);
    svg += DrawClusters(/*titles=*/true);  // over the edges entering the cluster
    svg += DrawLabels(labels);
    return svg + "</svg>\n";
  }

  // The frames (below everything) or the titles (above the edges, with a white halo so that
  // an edge entering the cluster does not hide them).
  std::string DrawClusters(bool titles) const {
    std::string svg;
    for (size_t c = 0; c < graph_.clusters.size(); ++c) {
      if (cluster_hi_[c] < 0) continue;
      const ReportCluster& cluster = graph_.clusters[c];
      const double title = static_cast<double>(cluster.lines.size()) * kLineHeight + kClusterPad;
      const double x = cluster_left_[c] - kClusterPad;
      const double y = layer_top_[static_cast<size_t>(cluster_lo_[c])] - title - kClusterPad;
      const size_t hi = static_cast<size_t>(cluster_hi_[c]);
      const double bottom = layer_top_[hi] + layer_height_[hi] + kClusterPad;
      if (!titles) {
        svg += fmt::format(
            "<g class=\"cluster\"><title>{}</title><rect x=\"{:.1f}\" y=\"{:.1f}\" "
            "width=\"{:.1f}\" height=\"{:.1f}\" rx=\"8\" fill=\"{}\" fill-opacity=\"0.12\" "
            "stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"6 3\"/></g>\n",
            XmlEscape(cluster.lines.front()), x, y, cluster_right_[c] + kClusterPad - x, bottom - y,
            cluster.colour, cluster.colour);
        continue;
      }
      svg += "<g class=\"cluster-title\">";
      for (size_t i = 0; i < cluster.lines.size(); ++i) {
        svg += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" font-weight=\"{}\" fill=\"#222222\" "
            "stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">{}</text>",
            x + kClusterPad, y + kClusterPad + kLineHeight * static_cast<double>(i + 1) - 3,
            i == 0 ? "bold" : "normal", XmlEscape(cluster.lines[i]));
      }
      svg += "</g>\n";
    }
    return svg;
  }

  // Vertical curves between layers, straight through each lane; the label (a conversion) at
  // the middle of the last curve, next to the box that reads the converted value.
  std::string DrawEdge(size_t e, std::vector<Label>& labels) const {
    const ReportEdge& edge = graph_.edges[e];
    const std::vector<int>& chain = chains_[e];
    struct Point {
      double x, y;
    };
    std::vector<Point> points;  // pairs: (leave a layer, enter the next)
    const Item& from = items_[static_cast<size_t>(chain.front())];
    points.push_back({PortX(e, true), Top(chain.front()) + from.height});
    for (size_t k = 1; k + 1 < chain.size(); ++k) {
      const double x = items_[static_cast<size_t>(chain[k])].x;
      const size_t l = static_cast<size_t>(items_[static_cast<size_t>(chain[k])].layer);
      points.push_back({x, layer_top_[l]});
      points.push_back({x, layer_top_[l] + layer_height_[l]});
    }
    points.push_back({PortX(e, false), Top(chain.back())});
    std::string d = fmt::format("M{:.1f},{:.1f}", points[0].x, points[0].y);
    for (size_t k = 0; k + 1 < points.size(); k += 2) {
      const Point a = points[k], b = points[k + 1];
      const double bend = (b.y - a.y) / 2;
      d += fmt::format(" C{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}", a.x, a.y + bend, b.x,
                       b.y - bend, b.x, b.y);
      if (k + 2 < points.size())
        d += fmt::format(" L{:.1f},{:.1f}", points[k + 2].x, points[k + 2].y);
    }
    const bool converted = !edge.conversion.empty();
    std::string svg = fmt::format(
        "<g class=\"edge\" data-from=\"{}\" data-to=\"{}\"><title>{} → {}</title><path d=\"{}\" "
        "fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" marker-end=\"url(#{})\"/></g>\n",
        edge.from, edge.to, XmlEscape(graph_.boxes[static_cast<size_t>(edge.from)].lines.front()),
        XmlEscape(graph_.boxes[static_cast<size_t>(edge.to)].lines.front()), d,
        converted ? "#d35400" : "#777777", converted ? 2 : 1.3,
        converted ? "arrow-conversion" : "arrow");
    if (converted) {
      Label label;
      std::stringstream lines(edge.conversion);
      for (std::string line; std::getline(lines, line);) {
        label.lines.push_back(line);
        label.width = std::max(label.width, TextWidth(line) * 0.92 + 10);
      }
      label.height = static_cast<double>(label.lines.size()) * 13 + 6;
      const Point a = points[points.size() - 2], b = points.back();
      label.x = (a.x + b.x) / 2;
      label.y = (a.y + b.y) / 2;
      labels.push_back(label);
    }
    return svg;
  }

  // Labels above everything else; one that would cover another in the same gap moves right.
  static std::string DrawLabels(std::vector<Label>& labels) {
    std::sort(labels.begin(), labels.end(),
              [](const Label& a, const Label& b) { return a.y != b.y ? a.y < b.y : a.x < b.x; });
    std::string svg;
    for (size_t i = 0; i < labels.size(); ++i) {
      Label& label = labels[i];
      for (size_t j = 0; j < i; ++j) {
        const Label& other = labels[j];
        const bool overlap_y = std::fabs(other.y - label.y) < (other.height + label.height) / 2;
        const bool overlap_x = std::fabs(other.x - label.x) < (other.width + label.width) / 2 + 4;
        if (overlap_y && overlap_x) label.x = other.x + (other.width + label.width) / 2 + 6;
      }
      const double left = label.x - label.width / 2, top = label.y - label.height / 2;
      svg += fmt::format(
          "<g class=\"conversion\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
          "height=\"{:.1f}\" "
          "rx=\"3\" fill=\"#fff4e5\" stroke=\"#d35400\"/>",
          left, top, label.width, label.height);
      for (size_t k = 0; k < label.lines.size(); ++k) {
        svg += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\" "
            "fill=\"#a04000\">{}</text>",
            label.x, top + 13 * static_cast<double>(k + 1), XmlEscape(label.lines[k]));
      }
      svg += "</g>\n";
    }
    return svg;
  }

  std::string DrawBox(size_t b) const {
    const ReportBox& box = graph_.boxes[b];
    const Item& item = items_[static_cast<size_t>(item_of_box_[b])];
    const double left = item.x - item.width / 2, top = layer_top_[static_cast<size_t>(item.layer)];
    std::string svg = fmt::format(
        "<g class=\"node\" data-box=\"{}\"><title>{}</title><rect x=\"{:.1f}\" y=\"{:.1f}\" "
        "width=\"{:.1f}\" height=\"{:.1f}\" rx=\"{}\" fill=\"{}\" stroke=\"{}\"/>",
        b, XmlEscape(box.tooltip), left, top, item.width, item.height, box.terminal ? 14 : 5,
        box.fill, box.terminal ? "#555555" : "#333333");
    const std::string colour = TextColourOn(box.fill);
    for (size_t k = 0; k < box.lines.size(); ++k) {
      svg += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"{}\"{}>{}</text>", item.x,
          top + kBoxPadding / 2 + kLineHeight * static_cast<double>(k + 1) - 3, colour,
          k == 0 && !box.terminal ? " font-weight=\"bold\"" : "", XmlEscape(box.lines[k]));
    }
    return svg + "</g>\n";
  }

  const ReportGraph& graph_;
  std::vector<int> layer_;  // of each box
  std::vector<Item> items_;
  std::vector<int> item_of_box_;
  std::vector<std::vector<int>> chains_;  // per edge: its items from source box to target box
  std::vector<std::vector<int>> layers_;  // item ids, in order
  std::vector<double> position_;
  std::vector<int> cluster_lo_, cluster_hi_;
  std::vector<double> cluster_left_, cluster_right_;
  std::vector<double> layer_top_, layer_height_;
  double total_width_ = 0, total_height_ = 0;
};

}  // namespace

std::string LayeredLayoutSvg(const ReportGraph& graph) { return Layout(graph).Svg(); }

}  // namespace collage
