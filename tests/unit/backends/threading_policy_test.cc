// The threading policy (src/runtime/threading.h): one thread count per calling thread for
// every library, and OpenMP wait settings that never override the user's and are in effect when
// the OpenMP runtime starts.
#include <gtest/gtest.h>

#if COLLAGE_HAS_OPENBLAS
#include <cblas.h>

// The OpenBLAS backend's own lock: a header private to its folder, reached by its path as a
// backend's own tests reach theirs.
#include "../../../backends/openblas/blas_threads.h"
#endif
#include <omp.h>

#include <Eigen/Core>
#include <string>
#include <thread>

#include "../cli/cli_test_util.h"
#include "runtime/threading.h"

namespace collage {
namespace {

TEST(ThreadPolicyTest, ResolveThreadCount) {
  EXPECT_EQ(ResolveThreadCount(3), 3);
  EXPECT_GE(ResolveThreadCount(0), 1);
  EXPECT_LE(ResolveThreadCount(0), omp_get_num_procs());
}

// The count is the calling thread's: another thread's setting is left alone, so sessions
// with different counts can run side by side.
TEST(ThreadPolicyTest, SetsOpenmpOnTheCallingThreadOnly) {
  const int before = omp_get_max_threads();
  ApplyThreadPolicy(3);
  EXPECT_EQ(omp_get_max_threads(), 3);
  int other = 0, other_eigen = 0;
  std::thread([&] {
    ApplyThreadPolicy(1);
    other = omp_get_max_threads();
    other_eigen = Eigen::nbThreads();
  }).join();
  EXPECT_EQ(other, 1);
  EXPECT_EQ(other_eigen, 1);
  EXPECT_EQ(omp_get_max_threads(), 3);
  ApplyThreadPolicy(0);  // 0: one per usable core
  EXPECT_EQ(omp_get_max_threads(), ResolveThreadCount(0));
  omp_set_num_threads(before);
}

// Eigen and OpenBLAS follow the calling thread's count (neither is given a process-wide one
// by the policy); OpenBLAS takes it at each call, also after a count of 1, after which
// OpenBLAS itself would stop looking (backends/openblas/blas_threads.h).
TEST(ThreadPolicyTest, LibrariesFollowTheCallingThreadsCount) {
  const int before = omp_get_max_threads();
  for (int threads : {1, 3, 2}) {
    ApplyThreadPolicy(threads);
    EXPECT_EQ(omp_get_max_threads(), threads);
    EXPECT_EQ(Eigen::nbThreads(), threads);
#if COLLAGE_HAS_OPENBLAS
    { openblas::BlasThreadScope scope; }
    EXPECT_EQ(openblas_get_num_threads(), threads);
#endif
  }
  omp_set_num_threads(before);
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
