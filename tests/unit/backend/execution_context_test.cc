// An execution context makes each resource once per key, hands the same object to every
// caller (from any thread), and destroys its resources with itself, the last made first.
#include "collage/sdk/execution_context.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace collage {
namespace {

struct Recorder {
  Recorder(std::string name, std::vector<std::string>* destroyed)
      : name(std::move(name)), destroyed(destroyed) {}
  ~Recorder() { destroyed->push_back(name); }
  std::string name;
  std::vector<std::string>* destroyed;
};

TEST(ExecutionContextTest, OneResourcePerKeyDestroyedWithTheContextLastFirst) {
  std::vector<std::string> destroyed;
  {
    ExecutionContext context(3);
    EXPECT_EQ(context.num_threads(), 3);
    int made = 0;
    auto make = [&](const std::string& name) {
      return std::function<std::unique_ptr<Recorder>()>([&, name] {
        ++made;
        return std::make_unique<Recorder>(name, &destroyed);
      });
    };
    Recorder& pool = context.Resource(ResourceKey<Recorder>{"pool"}, make("pool"));
    Recorder& again = context.Resource(ResourceKey<Recorder>{"pool"}, make("another pool"));
    EXPECT_EQ(&pool, &again);
    EXPECT_EQ(again.name, "pool");
    Recorder& cache = context.Resource(ResourceKey<Recorder>{"cache"}, make("cache"));
    EXPECT_NE(&pool, &cache);
    EXPECT_EQ(made, 2);
    EXPECT_TRUE(destroyed.empty());
  }
  EXPECT_EQ(destroyed, (std::vector<std::string>{"cache", "pool"}));
}

TEST(ExecutionContextTest, ConcurrentCallersGetTheOneObject) {
  ExecutionContext context(2);
  std::atomic<int> made{0};
  std::vector<int*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&, t] {
      seen[t] = &context.Resource(ResourceKey<int>{"counter"}, [&] {
        ++made;
        return std::make_unique<int>(7);
      });
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(made.load(), 1);
  for (int* p : seen) EXPECT_EQ(p, seen[0]);
}

TEST(ExecutionContextTest, TheSameNameWithAnotherTypeIsAnotherResource) {
  ExecutionContext context(1);
  int& number = context.Resource(ResourceKey<int>{"shared name"}, [] {
    return std::make_unique<int>(7);
  });
  std::string& text = context.Resource(ResourceKey<std::string>{"shared name"}, [] {
    return std::make_unique<std::string>("seven");
  });
  EXPECT_EQ(number, 7);
  EXPECT_EQ(text, "seven");
  EXPECT_EQ(&context.Resource(ResourceKey<int>{"shared name"}, [] { return std::make_unique<int>(8); }),
            &number);
}

TEST(ExecutionContextTest, AThreadCountBelowOneMeansOne) {
  EXPECT_EQ(ExecutionContext(0).num_threads(), 1);
  EXPECT_EQ(ExecutionContext(-4).num_threads(), 1);
}

}  // namespace
}  // namespace collage
