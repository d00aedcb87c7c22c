// Measures what the threading policy (src/runtime/threading.h) is for: kernels of different
// libraries (oneDNN conv, OpenBLAS / Eigen / XNNPACK GEMM on ResNet- and BERT-sized shapes)
// timed each alone, then interleaved round-robin as a placed graph runs them, under several
// OpenMP configurations. Idle workers of one library (OpenMP threads spinning after oneDNN's
// conv, ...) can steal the cores from the next library's kernel; the
// ratio interleaved/alone shows how much.
//
// OpenMP reads its environment once, when its runtime starts, so every configuration runs in
// a child process (this binary re-executed with --child NAME and the configuration's
// environment). The parent prints medians and ratios per configuration.
//
//   build/thread_policy_bench [--threads 2] [--reps 60] [--rounds 2] [--configs a,b,...]
//
// Not a test: the machine's speed varies, so compare numbers taken side by side in one run.
#include <omp.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "collage/sdk/rule.h"
#include "ops/graph_builder.h"
#include "runtime/threading.h"

extern char** environ;

namespace collage {
namespace {

struct Config {
  const char* name;
  const char* what;
  std::vector<std::pair<const char*, const char*>> env;  // set in the child's environment
  bool apply_threads;                                    // the child calls ApplyThreadPolicy
};

// A child whose environment names no wait setting gets collage's policy: this binary links
// the preinit object the CLI links (src/runtime/thread_policy_preinit.cc). libgomp's own
// default is therefore spelled out: a spin count of 300k iterations.
const std::vector<Config>& Configs() {
  static const std::vector<Config> configs = {
      {"defaults",
       "every library at its defaults: no thread calls, libgomp's spin",
       {{"GOMP_SPINCOUNT", "300000"}},
       false},
      {"threads",
       "ApplyThreadPolicy only, libgomp's default spin",
       {{"GOMP_SPINCOUNT", "300000"}},
       true},
      {"passive",
       "ApplyThreadPolicy, OMP_WAIT_POLICY=PASSIVE",
       {{"OMP_WAIT_POLICY", "PASSIVE"}},
       true},
      {"spin_10k", "ApplyThreadPolicy, GOMP_SPINCOUNT=10000", {{"GOMP_SPINCOUNT", "10000"}}, true},
      {"spin_1k", "ApplyThreadPolicy, GOMP_SPINCOUNT=1000", {{"GOMP_SPINCOUNT", "1000"}}, true},
      {"active",
       "ApplyThreadPolicy, OMP_WAIT_POLICY=ACTIVE",
       {{"OMP_WAIT_POLICY", "ACTIVE"}},
       true},
      {"policy", "collage's policy: the preinit wait setting + ApplyThreadPolicy", {}, true},
  };
  return configs;
}

// --- the child: compile kernels, time them ----------------------------------------------

struct Bench {
  std::string label;
  Graph graph;
  std::unique_ptr<Kernel> kernel;
  std::vector<std::unique_ptr<float, void (*)(void*)>> storage;
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
  void* workspace = nullptr;

  void Run() const {
    Status status = kernel->Run({inputs, outputs, workspace});
    if (!status.ok()) {
      std::fprintf(stderr, "%s: %s\n", label.c_str(), status.ToString().c_str());
      std::exit(1);
    }
  }
};

float* Allocate(Bench& b, size_t bytes) {
  const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  b.storage.emplace_back(static_cast<float*>(std::aligned_alloc(64, rounded)), std::free);
  std::memset(b.storage.back().get(), 0, rounded);
  return b.storage.back().get();
}

// The kernel a backend compiles for the single-node group of `graph`'s only heavy node (the
// first rule whose candidate it compiles), with buffers in the layouts it declares.
std::unique_ptr<Bench> MakeBench(const std::string& backend_name, const std::string& label,
                                 Graph graph, int threads, std::string* why) {
  const Backend* backend = GlobalBackendRegistry().Find(backend_name);
  if (backend == nullptr) {
    *why = "backend '" + backend_name + "' is not registered";
    return nullptr;
  }
  auto bench = std::make_unique<Bench>();
  bench->label = label;
  bench->graph = std::move(graph);
  for (const Candidate& c : EnumerateCandidates(bench->graph, backend->rules())) {
    if (c.nodes.size() != 1) continue;
    CompileRequest request = CompileRequest::For(bench->graph, c.nodes, c.rule, threads);
    auto kernel = backend->Compile(request);
    if (!kernel.ok()) {
      *why = kernel.status().ToString();
      continue;
    }
    bench->kernel = std::move(*kernel);
    bench->label += " [" + c.rule + "]";
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    for (size_t i = 0; i < request.inputs.size(); ++i) {
      const size_t bytes =
          bench->kernel->input_layouts()[i].BufferBytes(request.type(request.inputs[i]));
      float* data = Allocate(*bench, bytes);
      for (size_t j = 0; j < bytes / 4; ++j) data[j] = normal(rng);
      bench->inputs.push_back(data);
    }
    for (size_t i = 0; i < request.outputs.size(); ++i) {
      bench->outputs.push_back(Allocate(*bench, bench->kernel->output_layouts()[i].BufferBytes(
                                                    request.type(request.outputs[i]))));
    }
    if (bench->kernel->workspace_bytes() > 0) {
      bench->workspace = Allocate(*bench, bench->kernel->workspace_bytes());
    }
    return bench;
  }
  if (why->empty()) *why = "no single-node candidate";
  return nullptr;
}

Graph ConvGraph() {  // ResNet-50 layer1: 3x3, 64 -> 64 channels, 56x56
  GraphBuilder b("conv");
  ValueId x = b.Input("x", DType::kFloat32, {1, 64, 56, 56});
  b.Output(b.Node("Conv",
                  {x, b.RandomNormal("w", {64, 64, 3, 3}, 0.05f), b.RandomNormal("b", {64}, 0.1f)},
                  {{"pads", {1, 1, 1, 1}}}));
  return std::move(b).Build().value();
}

Graph GemmGraph() {  // BERT-base attention projection: [128, 768] x [768, 768]
  GraphBuilder b("gemm");
  ValueId x = b.Input("x", DType::kFloat32, {128, 768});
  b.Output(b.Node("MatMul", {x, b.RandomNormal("w", {768, 768}, 0.03f)}));
  return std::move(b).Build().value();
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

int RunChild(const Config& config, int threads, int reps) {
  if (config.apply_threads) ApplyThreadPolicy(threads);
  const struct {
    const char* backend;
    const char* label;
    Graph (*graph)();
  } specs[] = {
      {"onednn", "onednn conv3x3 64@56", ConvGraph},
      {"openblas", "openblas conv3x3 64@56", ConvGraph},
      {"openblas", "openblas gemm 128x768x768", GemmGraph},
      {"eigen", "eigen gemm 128x768x768", GemmGraph},
      {"xnnpack", "xnnpack gemm 128x768x768", GemmGraph},
  };
  std::vector<std::unique_ptr<Bench>> benches;
  for (const auto& spec : specs) {
    std::string why;
    // At the libraries' defaults XNNPACK is single-threaded: its kernels compiled for 1.
    const int compiled_for = config.apply_threads ? threads : 1;
    auto bench = MakeBench(spec.backend, spec.label, spec.graph(), compiled_for, &why);
    if (bench) {
      benches.push_back(std::move(bench));
    } else {
      std::printf("SKIP\t%s\t%s\n", spec.label, why.c_str());
    }
  }
  // Alone: each kernel back to back. Interleaved: one of each in turn, as a placed graph
  // alternates them.
  std::vector<std::vector<double>> alone(benches.size()), mixed(benches.size());
  for (size_t i = 0; i < benches.size(); ++i) {
    for (int w = 0; w < 3; ++w) benches[i]->Run();
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      benches[i]->Run();
      alone[i].push_back(Seconds(t0));
    }
  }
  for (int r = 0; r < reps + 3; ++r) {
    for (size_t i = 0; i < benches.size(); ++i) {
      auto t0 = std::chrono::steady_clock::now();
      benches[i]->Run();
      if (r >= 3) mixed[i].push_back(Seconds(t0));
    }
  }
  for (size_t i = 0; i < benches.size(); ++i) {
    std::printf("RESULT\t%s\t%.4f\t%.4f\n", benches[i]->label.c_str(), 1e3 * Median(alone[i]),
                1e3 * Median(mixed[i]));
  }
  return 0;
}

// --- the parent: one child per configuration --------------------------------------------

std::string RunInChild(const Config& config, const std::vector<std::string>& args) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    // The wait settings are the experiment: only the configuration sets them.
    if (IsOpenMpWaitSetting(*e)) continue;
    env.emplace_back(*e);
  }
  for (const auto& [name, value] : config.env) {
    env.push_back(std::string(name) + "=" + value);
  }
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_s = {"/proc/self/exe", "--child", config.name};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  if (rc == 0) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    int status = 0;
    waitpid(pid, &status, 0);
  }
  close(fds[0]);
  return out;
}

struct Row {
  double alone = 0, mixed = 0;
};

int RunParent(int threads, int reps, int rounds, const std::string& only) {
  std::vector<const Config*> configs;
  for (const Config& c : Configs()) {
    if (only.empty() ||
        ("," + only + ",").find("," + std::string(c.name) + ",") != std::string::npos) {
      configs.push_back(&c);
    }
  }
  const std::vector<std::string> args = {"--threads", std::to_string(threads), "--reps",
                                         std::to_string(reps)};
  // Per configuration and kernel, the best over rounds of each median: the rounds alternate
  // configurations, so a slow spell of the machine does not land on one configuration only.
  std::map<std::string, std::map<std::string, Row>> results;
  std::vector<std::string> kernels, skipped;
  for (int round = 0; round < rounds; ++round) {
    for (const Config* c : configs) {
      std::istringstream lines(RunInChild(*c, args));
      std::string line;
      while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string tag, label;
        std::getline(fields, tag, '\t');
        std::getline(fields, label, '\t');
        if (tag == "SKIP") {
          if (std::find(skipped.begin(), skipped.end(), line) == skipped.end())
            skipped.push_back(line);
          continue;
        }
        if (tag != "RESULT") continue;
        double alone = 0, mixed = 0;
        fields >> alone >> mixed;
        if (std::find(kernels.begin(), kernels.end(), label) == kernels.end())
          kernels.push_back(label);
        Row& row = results[c->name][label];
        row.alone = round == 0 ? alone : std::min(row.alone, alone);
        row.mixed = round == 0 ? mixed : std::min(row.mixed, mixed);
      }
    }
  }
  std::printf("thread policy bench: %d threads, median of %d runs per kernel, best of %d rounds\n",
              threads, reps, rounds);
  for (const std::string& s : skipped) std::printf("  %s\n", s.c_str());
  std::printf("\n%-10s %-48s %9s %12s %7s\n", "config", "kernel", "alone ms", "interleaved",
              "ratio");
  for (const Config* c : configs) {
    double sum_alone = 0, sum_mixed = 0;
    for (const std::string& k : kernels) {
      const Row& r = results[c->name][k];
      sum_alone += r.alone;
      sum_mixed += r.mixed;
      std::printf("%-10s %-48s %9.3f %12.3f %7.2f\n", c->name, k.c_str(), r.alone, r.mixed,
                  r.alone > 0 ? r.mixed / r.alone : 0.0);
    }
    std::printf("%-10s %-48s %9.3f %12.3f %7.2f   (%s)\n\n", c->name, "one round of all kernels",
                sum_alone, sum_mixed, sum_alone > 0 ? sum_mixed / sum_alone : 0.0, c->what);
  }
  return 0;
}

}  // namespace
}  // namespace collage

int main(int argc, char** argv) {
  int threads = 2, reps = 60, rounds = 2;
  std::string child, configs;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--child")
      child = argv[i + 1];
    else if (flag == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (flag == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (flag == "--rounds")
      rounds = std::atoi(argv[i + 1]);
    else if (flag == "--configs")
      configs = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (threads < 1 || reps < 1 || rounds < 1) return 2;
  if (child.empty()) return collage::RunParent(threads, reps, rounds, configs);
  for (const collage::Config& c : collage::Configs()) {
    if (child == c.name) return collage::RunChild(c, threads, reps);
  }
  std::fprintf(stderr, "unknown configuration %s\n", child.c_str());
  return 2;
}
