// Backends that go wrong on purpose, for the tests of the measurement and the search: one
// whose Compile fails, one that runs fast but computes the wrong answer, one whose kernel
// throws and one whose kernel reports an error. Each offers every Relu node alone.
#pragma once

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"

namespace collage::testing {

enum class Breakage { kCompileFails, kWrongAnswer, kThrows, kRunFails };

class BrokenKernel : public Kernel {
 public:
  BrokenKernel(Breakage breakage, size_t bytes) : breakage_(breakage), bytes_(bytes) {
    input_layouts_ = {Layout::Plain()};
    output_layouts_ = {Layout::Plain()};
  }
  Status Run(const KernelBuffers& buffers) const override {
    switch (breakage_) {
      case Breakage::kThrows: throw std::runtime_error("kernel blew up");
      case Breakage::kRunFails: return Internal("device lost");
      default: std::memset(buffers.outputs[0], 0, bytes_); return Status();  // zeros: wrong for Relu of N(0,1)
    }
  }

 private:
  Breakage breakage_;
  size_t bytes_;
};

class BrokenBackend : public Backend {
 public:
  BrokenBackend(std::string name, Breakage breakage) : name_(std::move(name)) {
    rules_.Add(Rule("relu", Op("Relu")(Any()))
                   .Compiles([breakage](const CompileRequest& request,
                                        const Match&) -> StatusOr<std::unique_ptr<Kernel>> {
                     if (breakage == Breakage::kCompileFails) {
                       return Unsupported("no implementation for this shape");
                     }
                     return std::unique_ptr<Kernel>(
                         new BrokenKernel(breakage, request.type(request.outputs[0]).nbytes()));
                   }));
  }
  std::string name() const override { return name_; }
  std::string version() const override { return "broken 1"; }
  const RuleSet& rules() const override { return rules_; }

 private:
  std::string name_;
  RuleSet rules_;
};

}  // namespace collage::testing
