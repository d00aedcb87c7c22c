// The threading policy (src/runtime/threading.h): one thread count for OpenMP and every
// backend, and OpenMP wait settings that never override the user's and are in effect when
// the OpenMP runtime starts.
#include <gtest/gtest.h>

#if COLLAGE_HAS_OPENBLAS
#include <cblas.h>
#endif
#include <omp.h>

#include <Eigen/Core>
#include <string>

#include "../cli/cli_test_util.h"
#include "collage/backend.h"
#include "runtime/threading.h"

namespace collage {
namespace {

// Records the thread counts the policy gives it.
class CountingBackend final : public Backend {
 public:
  CountingBackend(std::string name, std::vector<int>* calls)
      : name_(std::move(name)), calls_(calls) {}
  std::string name() const override { return name_; }
  std::string version() const override { return "test 1"; }
  const RuleSet& rules() const override { return rules_; }
  StatusOr<std::unique_ptr<Kernel>> Compile(const CompileRequest&) const override {
    return Status(StatusCode::kUnsupported, "nothing to compile");
  }
  void SetNumThreads(int num_threads) override { calls_->push_back(num_threads); }

 private:
  std::string name_;
  std::vector<int>* calls_;
  RuleSet rules_;
};

TEST(ThreadPolicyTest, ResolveThreadCount) {
  EXPECT_EQ(ResolveThreadCount(3), 3);
  EXPECT_GE(ResolveThreadCount(0), 1);
  EXPECT_LE(ResolveThreadCount(0), omp_get_num_procs());
}

TEST(ThreadPolicyTest, SetsOpenmpAndEveryBackend) {
  std::vector<int> a_calls, b_calls;
  BackendRegistry registry;
  ASSERT_TRUE(registry.Register(std::make_unique<CountingBackend>("a", &a_calls)).ok());
  ASSERT_TRUE(registry.Register(std::make_unique<CountingBackend>("b", &b_calls)).ok());
  const int before = omp_get_max_threads();
  ApplyThreadPolicy(3, registry);
  EXPECT_EQ(omp_get_max_threads(), 3);
  EXPECT_EQ(a_calls, std::vector<int>{3});
  EXPECT_EQ(b_calls, std::vector<int>{3});
  ApplyThreadPolicy(1, registry);
  EXPECT_EQ(omp_get_max_threads(), 1);
  EXPECT_EQ(a_calls, (std::vector<int>{3, 1}));
  ApplyThreadPolicy(0, registry);  // 0: one per usable core
  EXPECT_EQ(omp_get_max_threads(), ResolveThreadCount(0));
  EXPECT_EQ(b_calls.back(), ResolveThreadCount(0));
  omp_set_num_threads(before);
}

TEST(ThreadPolicyTest, SetsTheLibrariesOfTheGlobalRegistry) {
  BackendRegistry& registry = BackendRegistry::Global();
  const int before = omp_get_max_threads();
  for (int threads : {1, 3, 2}) {
    ApplyThreadPolicy(threads, registry);
    EXPECT_EQ(omp_get_max_threads(), threads);
#if COLLAGE_HAS_OPENBLAS
    if (registry.Find("openblas") != nullptr) {
      EXPECT_EQ(openblas_get_num_threads(), threads);
    }
#endif
    if (registry.Find("eigen") != nullptr) {
      EXPECT_EQ(Eigen::nbThreads(), threads);
    }
  }
  // Unchanged: cheap, and the calling thread's OpenMP count is still set (it is per thread).
  omp_set_num_threads(5);
  ApplyThreadPolicy(2, registry);
  EXPECT_EQ(omp_get_max_threads(), 2);
  ApplyThreadPolicy(before, registry);
}

// What libgomp itself read at start-up (OMP_DISPLAY_ENV=verbose prints it then): the
// policy's short spin, unless the user chose a setting.
TEST(ThreadPolicyTest, TheCommandLineStartsOpenMpWithThePolicy) {
  const std::string display = "OMP_DISPLAY_ENV=verbose";
  testing::CommandResult policy =
      testing::RunCli("backends", "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT " + display);
  ASSERT_EQ(policy.exit_code, 0) << policy.output;
  // LLVM's libomp (the clang sanitizer build) has no GOMP_SPINCOUNT and prints other names.
  if (policy.output.find("GOMP_SPINCOUNT") == std::string::npos) {
    GTEST_SKIP() << "the OpenMP runtime is not libgomp";
  }
  EXPECT_NE(policy.output.find("GOMP_SPINCOUNT = '" + std::string(kOpenMpSpinCount) + "'"),
            std::string::npos)
      << policy.output;

  testing::CommandResult users =
      testing::RunCli("backends", "env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=1234 " + display);
  ASSERT_EQ(users.exit_code, 0) << users.output;
  EXPECT_NE(users.output.find("GOMP_SPINCOUNT = '1234'"), std::string::npos) << users.output;

  testing::CommandResult active =
      testing::RunCli("backends", "env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=ACTIVE " + display);
  ASSERT_EQ(active.exit_code, 0) << active.output;
  EXPECT_NE(active.output.find("OMP_WAIT_POLICY = 'ACTIVE'"), std::string::npos) << active.output;
  EXPECT_EQ(active.output.find("GOMP_SPINCOUNT = '" + std::string(kOpenMpSpinCount) + "'"),
            std::string::npos)
      << active.output;
}

}  // namespace
}  // namespace collage
