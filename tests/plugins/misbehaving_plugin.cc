// A plug-in backend whose kernel misbehaves the way a broken library does, for the tests of
// the measurement worker: built three times, with COLLAGE_MISBEHAVIOUR 1 (the kernel writes
// through a null pointer: SIGSEGV), 2 (it calls abort()) or 3 (it never returns). It offers
// every Relu node alone, and compiles fine: only running it goes wrong.
//
// The hanging one writes its process id to $COLLAGE_TEST_HANG_PID_FILE (when set) as it
// starts to hang, so that a test knows the measurement is in flight, and where.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "collage/sdk/backend.h"

namespace {

#if COLLAGE_MISBEHAVIOUR == 1
constexpr const char* kName = "segfaulting";
#elif COLLAGE_MISBEHAVIOUR == 2
constexpr const char* kName = "aborting";
#else
constexpr const char* kName = "hanging";
#endif

class MisbehavingKernel : public collage::Kernel {
 public:
  MisbehavingKernel() {
    input_layouts_ = {collage::Layout::Plain()};
    output_layouts_ = {collage::Layout::Plain()};
  }
  collage::Status Run(const collage::KernelBuffers&) const override {
#if COLLAGE_MISBEHAVIOUR == 1
    // Both volatile: GCC drops a plain store through a pointer it can see is null.
    volatile int* volatile nowhere = nullptr;
    *nowhere = 1;
#elif COLLAGE_MISBEHAVIOUR == 2
    std::abort();
#else
    if (const char* file = std::getenv("COLLAGE_TEST_HANG_PID_FILE"); file != nullptr) {
      if (FILE* f = std::fopen(file, "w"); f != nullptr) {
        std::fprintf(f, "%d\n", static_cast<int>(::getpid()));
        std::fclose(f);
      }
    }
    while (true) std::this_thread::sleep_for(std::chrono::hours(1));
#endif
    return collage::Status();
  }
};

class MisbehavingBackend : public collage::Backend {
 public:
  MisbehavingBackend() {
    rules_.Add(collage::Rule("relu", collage::Op("Relu")(collage::Any()))
                   .Compiles([](const collage::CompileRequest&, const collage::Match&)
                                 -> collage::StatusOr<std::unique_ptr<collage::Kernel>> {
                     return std::unique_ptr<collage::Kernel>(new MisbehavingKernel());
                   }));
  }
  std::string name() const override { return kName; }
  std::string version() const override { return "misbehaving 1"; }
  const collage::RuleSet& rules() const override { return rules_; }

 private:
  collage::RuleSet rules_;
};

collage::Status RegisterMisbehaving(collage::BackendRegistry& registry) {
  return registry.Register(std::make_unique<MisbehavingBackend>());
}

}  // namespace

COLLAGE_PLUGIN(RegisterMisbehaving)
