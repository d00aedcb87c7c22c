#include "onednn_layout.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>

namespace collage::onednn {
namespace {

using dnnl::memory;

// Outer dim order (largest stride first) and inner blocks of a blocked descriptor.
struct Format {
  std::vector<int> order;
  std::vector<std::pair<int64_t, int>> blocks;  // (size, dim), outermost first
};

bool FormatOf(const memory::desc& desc, Format* format) {
  const dnnl_memory_desc_t& d = desc.data;
  if (d.format_kind != dnnl_blocked || d.offset0 != 0) return false;
  const auto& b = d.format_desc.blocking;
  format->order.resize(static_cast<size_t>(d.ndims));
  std::iota(format->order.begin(), format->order.end(), 0);
  // Size-1 dims carry no information; they go last in dim order so that equal formats get
  // equal names.
  auto key = [&](int i) { return d.padded_dims[i] == 1 ? int64_t{-1} : b.strides[i]; };
  std::stable_sort(format->order.begin(), format->order.end(),
                   [&](int x, int y) { return key(x) > key(y); });
  format->blocks.clear();
  for (int i = 0; i < b.inner_nblks; ++i) format->blocks.emplace_back(b.inner_blks[i], static_cast<int>(b.inner_idxs[i]));
  // When the dims that are not 1 follow the plain or the channels-last order, name the format
  // by that order in full: oneDNN's optimized implementations match their formats by exact
  // strides, size-1 dims included (an N=1 nhwc tensor with N's stride 1 falls to a reference
  // implementation).
  const int ndims = d.ndims;
  std::vector<int> plain(static_cast<size_t>(ndims)), channels_last;
  std::iota(plain.begin(), plain.end(), 0);
  if (ndims >= 3) {
    channels_last.push_back(0);
    for (int i = 2; i < ndims; ++i) channels_last.push_back(i);
    channels_last.push_back(1);
  }
  auto non_unit = [&](const std::vector<int>& order) {
    std::vector<int> kept;
    for (int i : order) {
      if (d.padded_dims[i] != 1) kept.push_back(i);
    }
    return kept;
  };
  const std::vector<int> actual = non_unit(format->order);
  for (const std::vector<int>* standard : {&plain, &channels_last}) {
    if (!standard->empty() && non_unit(*standard) == actual) {
      format->order = *standard;
      break;
    }
  }
  return true;
}

std::string Encode(const Format& f) {
  std::string s;
  for (int i : f.order) s += static_cast<char>('a' + i);
  if (!f.blocks.empty()) {
    s += ':';
    for (const auto& [size, dim] : f.blocks) s += std::to_string(size) + static_cast<char>('a' + dim);
  }
  return s;
}

StatusOr<Format> Decode(const std::string& text, int ndims) {
  Format f;
  size_t colon = text.find(':');
  std::string order = text.substr(0, colon);
  if (static_cast<int>(order.size()) != ndims) return InvalidArgument("format '{}' is not of rank {}", text, ndims);
  std::vector<bool> seen(static_cast<size_t>(ndims), false);
  for (char c : order) {
    int i = c - 'a';
    if (i < 0 || i >= ndims || seen[static_cast<size_t>(i)]) return InvalidArgument("bad format '{}'", text);
    seen[static_cast<size_t>(i)] = true;
    f.order.push_back(i);
  }
  if (colon != std::string::npos) {
    std::string rest = text.substr(colon + 1);
    size_t pos = 0;
    while (pos < rest.size()) {
      size_t digits = pos;
      while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
      if (digits == pos || digits >= rest.size()) return InvalidArgument("bad format '{}'", text);
      int64_t size = std::stoll(rest.substr(pos, digits - pos));
      int dim = rest[digits] - 'a';
      if (size < 1 || size > 4096 || dim < 0 || dim >= ndims) return InvalidArgument("bad format '{}'", text);
      f.blocks.emplace_back(size, dim);
      pos = digits + 1;
    }
    if (f.blocks.size() > DNNL_MAX_NDIMS) return InvalidArgument("bad format '{}'", text);
  }
  return f;
}

memory::desc Build(const memory::dims& dims, const Format& f) {
  dnnl_memory_desc_t d{};
  d.ndims = static_cast<int>(dims.size());
  d.data_type = dnnl_f32;
  d.format_kind = dnnl_blocked;
  std::vector<int64_t> block(dims.size(), 1);
  for (const auto& [size, dim] : f.blocks) block[static_cast<size_t>(dim)] *= size;
  int64_t inner = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    d.dims[i] = dims[i];
    d.padded_dims[i] = (dims[i] + block[i] - 1) / block[i] * block[i];
    inner *= block[i];
  }
  auto& b = d.format_desc.blocking;
  b.inner_nblks = static_cast<int>(f.blocks.size());
  for (size_t i = 0; i < f.blocks.size(); ++i) {
    b.inner_blks[i] = f.blocks[i].first;
    b.inner_idxs[i] = f.blocks[i].second;
  }
  int64_t stride = inner;
  for (size_t k = f.order.size(); k-- > 0;) {
    size_t i = static_cast<size_t>(f.order[k]);
    b.strides[i] = stride;
    stride *= d.padded_dims[i] / block[i];
  }
  return memory::desc(d);
}

Format PlainFormat(int ndims) {
  Format f;
  for (int i = 0; i < ndims; ++i) f.order.push_back(i);
  return f;
}

Format ChannelsLastFormat(int ndims) {
  Format f;
  f.order.push_back(0);
  for (int i = 2; i < ndims; ++i) f.order.push_back(i);
  f.order.push_back(1);
  return f;
}

bool SameFormat(const Format& a, const Format& b) { return a.order == b.order && a.blocks == b.blocks; }

// Normalises through Format so that equal formats compare equal whatever strides oneDNN
// gave size-1 dims.
memory::desc Canonical(const memory::desc& desc) {
  Format f;
  if (!FormatOf(desc, &f)) return desc;
  return Build(desc.dims(), f);
}

memory::desc ProbeConvSrc(const Shape& shape) {
  const size_t spatial = shape.size() - 2;
  memory::dims src = ToDims(shape);
  memory::dims weights = {shape[1], shape[1]};
  memory::dims ones(spatial, 1), zeros(spatial, 0);
  for (size_t i = 0; i < spatial; ++i) weights.push_back(1);
  auto any = [](const memory::dims& dims) {
    return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
  };
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                    dnnl::algorithm::convolution_direct, any(src), any(weights),
                                    any(src), ones, zeros, zeros);
  dnnl::convolution_forward::primitive_desc pd(d, Engine());
  return Canonical(pd.src_desc());
}

}  // namespace

memory::desc ActivationDesc(const Shape& shape, bool blocked) {
  if (!blocked || shape.size() < 3 || shape.size() > 5) return PlainDesc(shape);
  static std::mutex mutex;
  static std::map<Shape, memory::desc>* cache = new std::map<Shape, memory::desc>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache->find(shape);
  if (it != cache->end()) return it->second;
  memory::desc desc = PlainDesc(shape);
  try {
    // A 1x1 convolution keeping the channel count: the format oneDNN's convolutions want
    // for this tensor on this CPU.
    desc = ProbeConvSrc(shape);
  } catch (const dnnl::error&) {
    // No convolution for this shape: plain.
  }
  cache->emplace(shape, desc);
  return desc;
}

memory::desc SameFormatAs(const memory::desc& like, const Shape& shape) {
  Format f;
  if (!FormatOf(like, &f) || like.dims().size() != shape.size()) return PlainDesc(shape);
  return Build(ToDims(shape), f);
}

bool HasBlockedForm(const Shape& shape) {
  return LayoutOf(ActivationDesc(shape, true)).kind() != LayoutKind::kPlain;
}

Layout LayoutOf(const memory::desc& desc) {
  Format f;
  if (!FormatOf(desc, &f)) return Layout::Opaque("onednn", "unknown", desc.get_size());
  const int ndims = static_cast<int>(desc.dims().size());
  Format plain;
  FormatOf(Build(desc.dims(), PlainFormat(ndims)), &plain);
  if (SameFormat(f, plain)) return Layout::Plain();
  if (ndims >= 3 && ndims <= 5 && f.blocks.empty()) {
    Format cl;
    FormatOf(Build(desc.dims(), ChannelsLastFormat(ndims)), &cl);
    if (SameFormat(f, cl)) return Layout::ChannelsLast();
  }
  return Layout::Opaque("onednn", Encode(f), desc.get_size());
}

StatusOr<memory::desc> DescOf(const TensorType& type, const Layout& layout) {
  if (type.dtype != DType::kFloat32) return Unsupported("oneDNN layouts: float32 only, not {}", DTypeName(type.dtype));
  const memory::dims dims = ToDims(type.shape);
  const int ndims = static_cast<int>(dims.size());
  switch (layout.kind()) {
    case LayoutKind::kPlain:
      return PlainDesc(type.shape);
    case LayoutKind::kChannelsLast:
      if (ndims < 3 || ndims > 5) return InvalidArgument("no channels-last form for {}", type.ToString());
      return Build(dims, ChannelsLastFormat(ndims));
    case LayoutKind::kOpaque: {
      if (layout.owner() != "onednn") return InvalidArgument("layout '{}' is not oneDNN's", layout.name());
      COLLAGE_ASSIGN_OR_RETURN(Format f, Decode(layout.format(), ndims));
      return Build(dims, f);
    }
  }
  return Internal("unknown layout kind");
}

StatusOr<std::unique_ptr<Kernel>> CompileReorder(const TensorType& type, const Layout& from,
                                                 const Layout& to) {
  COLLAGE_ASSIGN_OR_RETURN(memory::desc src, DescOf(type, from));
  COLLAGE_ASSIGN_OR_RETURN(memory::desc dst, DescOf(type, to));
  return ReorderKernel("reorder", src, dst, from, to);
}

StatusOr<std::unique_ptr<Kernel>> ReorderKernel(const std::string& what, const memory::desc& src,
                                                const memory::desc& dst, const Layout& from,
                                                const Layout& to) {
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard(what, [&]() -> Status {
    dnnl::reorder::primitive_desc pd(Engine(), src, Engine(), dst, BaseAttr());
    std::vector<ArgBinding> args(2);
    args[0].arg = DNNL_ARG_FROM;
    args[0].desc = src;
    args[1].arg = DNNL_ARG_TO;
    args[1].source = ArgBinding::Source::kOutput;
    args[1].desc = dst;
    kernel = std::make_unique<OnednnKernel>(what, dnnl::reorder(pd), std::move(args),
                                            pd.scratchpad_desc(), std::vector<Layout>{from},
                                            std::vector<Layout>{to});
    return Status();
  }));
  return kernel;
}

}  // namespace collage::onednn
