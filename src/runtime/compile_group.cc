#include "runtime/compile_group.h"

#include <new>

#include "collage/sdk/errors.h"

namespace collage {

std::string DescribeGroup(const std::string& backend, const CompileRequest& request) {
  std::vector<NodeId> nodes = request.node_ids();
  if (nodes.empty()) return fmt::format("backend '{}', rule '{}', empty group", backend, request.rule);
  const Node& first = request.graph->node(nodes.front());
  std::string more = nodes.size() > 1 ? fmt::format(" and {} more", nodes.size() - 1) : "";
  return fmt::format("backend '{}', rule '{}', node '{}' ({}){}", backend, request.rule,
                     first.name, first.op_type, more);
}

StatusOr<std::unique_ptr<Kernel>> CompileGroup(const Backend& backend, const CompileRequest& request) {
  auto fail = [&](const Status& status) {
    return Status(status.code(), DescribeGroup(backend.name(), request) + ": " + status.message());
  };
  StatusOr<std::unique_ptr<Kernel>> compiled = Internal("not compiled");
  try {
    compiled = backend.Compile(request);
  } catch (const std::bad_alloc&) {
    return fail(Internal("out of memory while compiling"));
  } catch (const std::exception& e) {
    return fail(Internal("the library threw while compiling: {}", e.what()));
  } catch (...) {
    return fail(Internal("the library threw an unknown exception while compiling"));
  }
  if (!compiled.ok()) return fail(compiled.status());
  const Kernel& kernel = **compiled;
  if (kernel.input_layouts().size() != request.inputs.size() ||
      kernel.output_layouts().size() != request.outputs.size()) {
    return fail(Internal("the kernel declares {} input and {} output layouts for {} inputs and {} "
                         "outputs",
                         kernel.input_layouts().size(), kernel.output_layouts().size(),
                         request.inputs.size(), request.outputs.size()));
  }
  return compiled;
}

}  // namespace collage
