// The Eigen backend: GEMMs as Eigen matrix products, elementwise chains as tiled array
// expressions.
#include <Eigen/Core>

#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"
#include "eigen_rules.h"

namespace collage {
namespace {

class EigenBackend final : public Backend {
 public:
  EigenBackend() : rules_(eigen::BuildRules()) {}

  std::string name() const override { return "eigen"; }

  // "Eigen 3.4.0 AVX512, FMA, ...": the release and the SIMD sets this build vectorises for.
  std::string version() const override {
    return fmt::format("Eigen {}.{}.{} {}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                       EIGEN_MINOR_VERSION, Eigen::SimdInstructionSetsInUse());
  }

  const RuleSet& rules() const override { return rules_; }

  // No process-wide thread count: Eigen::setNbThreads is one process-wide value, which sessions with
  // different thread counts would overwrite under each other's runs. Never set, Eigen's
  // products size their OpenMP team by the calling thread's omp_get_max_threads(), which
  // Session::Run sets for its session (Eigen 3.4, Parallelizer.h).

 private:
  RuleSet rules_;
};

}  // namespace

Status RegisterEigenBackend(BackendRegistry& registry) {
  return registry.Register(std::make_unique<EigenBackend>());
}

}  // namespace collage
