// Einsum: a sum of products over the labelled dims of its inputs, as numpy.einsum computes it.
// The equation names each input's dims with letters ("bij,bjk->bik"); "..." stands for dims
// broadcast together across inputs; a letter repeated within one input takes its diagonal; a
// letter missing from the output is summed over. Without "->" the output is "..." followed by
// the letters that appear exactly once, in ASCII order.
//
// The kernel is a plain reference: one odometer over every label, output labels outermost,
// so each output element is the sum over the summed labels' index space.
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/op_helpers.h"

namespace collage {
namespace {

// A term is its labels in order: letters, and at most one kEllipsis standing for "...".
constexpr char kEllipsis = '.';
using Term = std::string;

struct Equation {
  std::vector<Term> inputs;
  std::optional<Term> output;  // nullopt: implicit output
};

// The equation resolved against the input shapes. Labels are numbered: the broadcast dims
// of "..." first (0 .. ellipsis_rank - 1, left to right), then letters by first appearance.
struct EinsumPlan {
  std::vector<int64_t> sizes;                  // per label, after size-1 broadcasting
  std::vector<char> names;                     // per label: its letter, kEllipsis for "..."
  std::vector<std::vector<int>> input_labels;  // per input, per dim
  std::vector<int> output_labels;              // per output dim
  Shape output_shape;
};

// Every equation error is a malformed model; the message quotes the equation.
template <typename... Args>
Status EquationError(const Node& node, const std::string& equation,
                     fmt::format_string<Args...> what, Args&&... args) {
  return OpError(node, StatusCode::kInvalidModel, "equation '{}': {}", equation,
                 fmt::format(what, std::forward<Args>(args)...));
}

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

StatusOr<Term> ParseTerm(const Node& node, const std::string& equation, const std::string& text) {
  Term term;
  bool has_ellipsis = false;
  for (size_t i = 0; i < text.size();) {
    if (IsLetter(text[i])) {
      term += text[i++];
    } else if (text.compare(i, 3, "...") == 0) {
      if (has_ellipsis) return EquationError(node, equation, "term '{}' has two '...'", text);
      has_ellipsis = true;
      term += kEllipsis;
      i += 3;
    } else {
      // A byte outside printable ASCII (part of a UTF-8 letter, say) is shown by its value.
      const unsigned char c = static_cast<unsigned char>(text[i]);
      const std::string shown =
          c >= 0x20 && c < 0x7f ? fmt::format("'{}'", text[i]) : fmt::format("byte 0x{:02X}", c);
      return EquationError(node, equation, "unexpected character {} in term '{}'", shown, text);
    }
  }
  return term;
}

StatusOr<Equation> ParseEquation(const Node& node, const std::string& equation) {
  // Whitespace carries no meaning ("bij, bjk -> bik" is valid).
  std::string s;
  for (char c : equation) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') s += c;
  }
  const size_t arrow = s.find("->");
  if (arrow != std::string::npos && s.find("->", arrow + 2) != std::string::npos) {
    return EquationError(node, equation, "more than one '->'");
  }
  Equation eq;
  const std::string lhs = s.substr(0, arrow);
  for (size_t begin = 0;;) {
    const size_t comma = lhs.find(',', begin);
    COLLAGE_ASSIGN_OR_RETURN(Term term,
                             ParseTerm(node, equation, lhs.substr(begin, comma - begin)));
    eq.inputs.push_back(std::move(term));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (arrow != std::string::npos) {
    COLLAGE_ASSIGN_OR_RETURN(Term out, ParseTerm(node, equation, s.substr(arrow + 2)));
    eq.output = std::move(out);
  }
  return eq;
}

// The term as written, for messages.
std::string TermText(const Term& term) {
  std::string text;
  for (char c : term) text += c == kEllipsis ? std::string("...") : std::string(1, c);
  return text;
}

std::string LabelName(const EinsumPlan& plan, int label) {
  return plan.names[static_cast<size_t>(label)] == kEllipsis
             ? fmt::format("'...' dim {}", label)
             : fmt::format("'{}'", plan.names[static_cast<size_t>(label)]);
}

// Numbers the dims of each input, checking ranks against the terms.
Status LabelInputs(const Node& node, const std::string& equation, const Equation& eq,
                   const std::vector<Shape>& shapes, EinsumPlan& plan) {
  if (eq.inputs.size() != shapes.size()) {
    return EquationError(node, equation, "has {} input terms for {} inputs", eq.inputs.size(),
                         shapes.size());
  }
  // Dims each input's "..." stands for: its rank minus its letters.
  std::vector<int64_t> ellipsis_dims;
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Term& term = eq.inputs[i];
    const bool has_ellipsis = term.find(kEllipsis) != Term::npos;
    const int64_t letters = static_cast<int64_t>(term.size()) - (has_ellipsis ? 1 : 0);
    const int64_t rank = static_cast<int64_t>(shapes[i].size());
    if (has_ellipsis ? letters > rank : letters != rank) {
      return EquationError(node, equation, "term '{}' does not fit input {} of shape {}",
                           TermText(term), i, ShapeToString(shapes[i]));
    }
    ellipsis_dims.push_back(rank - letters);
    ellipsis_rank = std::max(ellipsis_rank, rank - letters);
  }
  plan.names.assign(static_cast<size_t>(ellipsis_rank), kEllipsis);
  std::array<int, 128> letter_label;
  letter_label.fill(-1);
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<int>& labels = plan.input_labels.emplace_back();
    for (char c : eq.inputs[i]) {
      if (c == kEllipsis) {
        // Right-aligned, as numpy broadcasts.
        for (int64_t k = ellipsis_rank - ellipsis_dims[i]; k < ellipsis_rank; ++k) {
          labels.push_back(static_cast<int>(k));
        }
        continue;
      }
      int& label = letter_label[static_cast<size_t>(c)];
      if (label < 0) {
        label = static_cast<int>(plan.names.size());
        plan.names.push_back(c);
      }
      labels.push_back(label);
    }
  }
  return Status::Ok();
}

// Each label's size: equal wherever it appears, except that size 1 broadcasts (numpy's rule).
// Within one input a repeated letter takes a diagonal, which needs equal sizes.
Status SizeLabels(const Node& node, const std::string& equation, const std::vector<Shape>& shapes,
                  EinsumPlan& plan) {
  plan.sizes.assign(plan.names.size(), 1);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::vector<int>& labels = plan.input_labels[i];
    for (size_t d = 0; d < labels.size(); ++d) {
      const int64_t size = shapes[i][d];
      for (size_t e = 0; e < d; ++e) {
        if (labels[e] == labels[d] && shapes[i][e] != size) {
          return EquationError(node, equation,
                               "label {} repeats in input {} with sizes {} and {}; a diagonal "
                               "needs equal sizes",
                               LabelName(plan, labels[d]), i, shapes[i][e], size);
        }
      }
      int64_t& known = plan.sizes[static_cast<size_t>(labels[d])];
      if (size == 1 || size == known) continue;
      if (known != 1) {
        return EquationError(node, equation, "label {} has size {} in input {} but {} elsewhere",
                             LabelName(plan, labels[d]), size, i, known);
      }
      known = size;
    }
  }
  return Status::Ok();
}

// The output labels, explicit or implicit.
Status LabelOutput(const Node& node, const std::string& equation, const Equation& eq,
                   EinsumPlan& plan) {
  const int ellipsis_rank =
      static_cast<int>(std::count(plan.names.begin(), plan.names.end(), kEllipsis));
  auto append_ellipsis = [&] {
    for (int k = 0; k < ellipsis_rank; ++k) plan.output_labels.push_back(k);
  };
  if (!eq.output) {
    // numpy's implicit mode: "..." first, then the letters used once, in ASCII order.
    const bool any_ellipsis = std::any_of(eq.inputs.begin(), eq.inputs.end(), [](const Term& t) {
      return t.find(kEllipsis) != Term::npos;
    });
    if (any_ellipsis) append_ellipsis();
    std::array<int, 128> count{};
    for (const Term& t : eq.inputs) {
      for (char c : t) ++count[static_cast<size_t>(c)];
    }
    for (size_t c = 0; c < count.size(); ++c) {
      if (count[c] != 1 || c == static_cast<size_t>(kEllipsis)) continue;
      const auto it = std::find(plan.names.begin(), plan.names.end(), static_cast<char>(c));
      plan.output_labels.push_back(static_cast<int>(it - plan.names.begin()));
    }
    return Status::Ok();
  }
  const Term& out = *eq.output;
  for (size_t k = 0; k < out.size(); ++k) {
    const char c = out[k];
    if (c == kEllipsis) {
      append_ellipsis();
      continue;
    }
    if (out.find(c, k + 1) != Term::npos) {
      return EquationError(node, equation, "output label '{}' repeats", c);
    }
    const auto it = std::find(plan.names.begin(), plan.names.end(), c);
    if (it == plan.names.end()) {
      return EquationError(node, equation, "output label '{}' is in no input term", c);
    }
    plan.output_labels.push_back(static_cast<int>(it - plan.names.begin()));
  }
  // numpy refuses to sum the broadcast dims away silently.
  if (ellipsis_rank > 0 && out.find(kEllipsis) == Term::npos) {
    return EquationError(
        node, equation, "the inputs have {} '...' dims but the output has no '...'", ellipsis_rank);
  }
  return Status::Ok();
}

StatusOr<EinsumPlan> MakeEinsumPlan(const Node& node, const std::vector<Shape>& shapes) {
  if (!node.attributes.Has("equation")) {
    return OpError(node, StatusCode::kInvalidModel, "the 'equation' attribute is missing");
  }
  const std::string equation = node.attributes.GetString("equation", "");
  COLLAGE_ASSIGN_OR_RETURN(Equation eq, ParseEquation(node, equation));
  EinsumPlan plan;
  COLLAGE_RETURN_IF_ERROR(LabelInputs(node, equation, eq, shapes, plan));
  COLLAGE_RETURN_IF_ERROR(SizeLabels(node, equation, shapes, plan));
  COLLAGE_RETURN_IF_ERROR(LabelOutput(node, equation, eq, plan));
  for (int label : plan.output_labels) {
    plan.output_shape.push_back(plan.sizes[static_cast<size_t>(label)]);
  }
  // The kernel visits every combination of label values; the count must be a number.
  if (!CheckedProduct(plan.sizes)) {
    return EquationError(node, equation, "the label sizes [{}] multiply past int64",
                         fmt::join(plan.sizes, ","));
  }
  return plan;
}

Status InferEinsum(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(
      RequireDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}));
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "input {} is missing", i);
    }
    COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, i));
    shapes.push_back(ctx.input_type(i).shape);
  }
  COLLAGE_ASSIGN_OR_RETURN(EinsumPlan plan, MakeEinsumPlan(ctx.node, shapes));
  ctx.output_types[0] = {ctx.input_type(0).dtype, std::move(plan.output_shape)};
  return Status::Ok();
}

// Floats accumulate in double; integers in uint64_t, whose wrap-around is the two's
// complement result numpy gives, without signed overflow.
template <typename T>
using EinsumAcc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

template <typename T>
EinsumAcc<T> ToAcc(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(v);
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
}

template <typename T>
T FromAcc(EinsumAcc<T> v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    return static_cast<T>(static_cast<int64_t>(v));  // modular since C++20
  }
}

template <typename T>
void RunEinsumTyped(const EinsumPlan& plan, std::span<const Tensor> inputs, T* out) {
  const int64_t out_count = NumElements(plan.output_shape);
  if (out_count == 0) return;
  // Labels in visiting order: the output's (outermost, in output order), then the summed.
  std::vector<int> order = plan.output_labels;
  for (int l = 0; l < static_cast<int>(plan.sizes.size()); ++l) {
    if (std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
  }
  int64_t sum_count = 1;
  for (size_t k = plan.output_labels.size(); k < order.size(); ++k) {
    sum_count *= plan.sizes[static_cast<size_t>(order[k])];
  }
  if (sum_count == 0) {  // an empty sum
    std::fill(out, out + out_count, T{0});
    return;
  }
  // stride[i][k]: how far input i's offset moves when label order[k] advances. A repeated
  // label adds its dims' strides (the diagonal); a broadcast size-1 dim adds none.
  const size_t n_in = inputs.size();
  std::vector<std::vector<int64_t>> stride(n_in, std::vector<int64_t>(order.size(), 0));
  for (size_t i = 0; i < n_in; ++i) {
    const std::vector<int64_t> dim_strides = StridesOf(inputs[i].shape());
    const std::vector<int>& labels = plan.input_labels[i];
    for (size_t d = 0; d < labels.size(); ++d) {
      if (inputs[i].dim(static_cast<int64_t>(d)) == 1) continue;
      const size_t k =
          static_cast<size_t>(std::find(order.begin(), order.end(), labels[d]) - order.begin());
      stride[i][k] += dim_strides[d];
    }
  }
  std::vector<const T*> data;
  for (const Tensor& t : inputs) data.push_back(t.data_as<T>());
  std::vector<int64_t> offset(n_in, 0);
  std::vector<int64_t> pos(order.size(), 0);
  for (int64_t o = 0; o < out_count; ++o) {
    EinsumAcc<T> acc = 0;
    for (int64_t s = 0; s < sum_count; ++s) {
      EinsumAcc<T> product = 1;
      for (size_t i = 0; i < n_in; ++i) product *= ToAcc(data[i][offset[i]]);
      acc += product;
      // Advance the odometer; after the summed labels wrap, the next output label moves.
      for (size_t k = order.size(); k-- > 0;) {
        for (size_t i = 0; i < n_in; ++i) offset[i] += stride[i][k];
        if (++pos[k] < plan.sizes[static_cast<size_t>(order[k])]) break;
        for (size_t i = 0; i < n_in; ++i) {
          offset[i] -= stride[i][k] * plan.sizes[static_cast<size_t>(order[k])];
        }
        pos[k] = 0;
      }
    }
    out[o] = FromAcc<T>(acc);
  }
}

Status RunEinsum(KernelContext& ctx) {
  std::vector<Shape> shapes;
  for (const Tensor& t : ctx.inputs) shapes.push_back(t.shape());
  COLLAGE_ASSIGN_OR_RETURN(EinsumPlan plan, MakeEinsumPlan(ctx.node, shapes));
  Tensor& out = ctx.outputs[0];
  switch (out.dtype()) {
    case DType::kFloat32: RunEinsumTyped(plan, ctx.inputs, out.data_as<float>()); break;
    case DType::kFloat64: RunEinsumTyped(plan, ctx.inputs, out.data_as<double>()); break;
    case DType::kInt32: RunEinsumTyped(plan, ctx.inputs, out.data_as<int32_t>()); break;
    case DType::kInt64: RunEinsumTyped(plan, ctx.inputs, out.data_as<int64_t>()); break;
    default:
      return OpError(ctx.node, StatusCode::kUnsupported, "dtype {} is not supported",
                     DTypeName(out.dtype()));
  }
  return Status::Ok();
}

}  // namespace

void RegisterEinsumOps(OpRegistry& registry) {
  // A contraction: neither a reduction along fixed axes nor element-wise; the fusion
  // generators leave it alone.
  OpDef def;
  def.op_type = "Einsum";
  def.kind = OpKind::kOpaque;
  def.min_inputs = 1;
  def.max_inputs = std::numeric_limits<int>::max();  // variadic
  def.infer = InferEinsum;
  def.run = RunEinsum;
  registry.Register(std::move(def));
}

}  // namespace collage
