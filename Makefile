# The two commands of the README:
#   make demo   build collage and run the main job on a built-in model
#   make test   build everything and run every test (unit, conformance, exporter models,
#               sanitizers, fuzzing); installs what it needs first
BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
# Whole ResNet-50 / BERT-base runs take ~8 minutes under the sanitizers; the release run
# covers them, and MobileNetV2, the DCGAN generator and the NAS-RNN on every backend plus the
# harness's zoo groups exercise the same kernels under the sanitizers. The other large zoo
# models (ResNeXt-50, NASNet-A, 3D-ResNet-50, GPT-2) and building every model twice are left
# to the release run likewise, as is optimizing every zoo model (minutes of measurement
# under the sanitizers); the optimizer's own tests run.
ASAN_SKIP := *SingleBackendZooTest.*resnet50:*SingleBackendZooTest.*bert_base:ZooRoundTripTest.ResNet50:ZooRoundTripTest.BertBase:*OptimizedZooTest.*
ASAN_SKIP := $(ASAN_SKIP):*SingleBackendZooTest.*resnext50:*SingleBackendZooTest.*nasnet_a:*SingleBackendZooTest.*resnet3d50:*SingleBackendZooTest.*gpt2
ASAN_SKIP := $(ASAN_SKIP):ZooWorkloadsTest.ResNet3d50:ZooWorkloadsTest.Gpt2Small:ZooTest.BuildingTwiceGivesIdenticalWeights
# LLVM's libomp (the sanitizer build's OpenMP) maps a registration file in /dev/shm at start-up
# and dies of SIGBUS under a file-size limit of a few hundred bytes; the release build
# (libgomp) runs the file-size-limit test of the command line.
ASAN_SKIP := $(ASAN_SKIP):*AWriteThatRunsOutOfSpaceLeavesTheOldFileAndNoPartialOne
# Optimizing with reduced precision repeatedly (a zoo model, the CLI's optimizes, a search run
# six times: minutes of measurement under the sanitizers); the precision search's first test,
# the CLI's refusals and the bf16 kernels' tests run.
ASAN_SKIP := $(ASAN_SKIP):CliPrecisionTest.AZooModelsAutoPlanPassesItsOwnCheck:CliPrecisionTest.AutoReports*
ASAN_SKIP := $(ASAN_SKIP):PrecisionSearchTest.AToleranceNoReducedPrecisionMeets*
JOBS      ?= $(shell nproc)
# ccache (installed with the build packages) keeps compiled objects between builds, in any
# checkout of the project: paths are taken relative to the checkout, and the build folder is
# left out of the key of objects with debug information (the sanitizer build's), so a fresh
# clone of the same sources (CI's) compiles only what changed. (The debug information then
# names the folder of the build that first compiled an object.)
CCACHE    := $(shell command -v ccache 2>/dev/null)
LAUNCHER  := $(if $(CCACHE),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: demo test deps test-deps build sanitize fuzz tidy compare parity clean

# The demo builds only what it runs: the library, the command line, its measurement worker and
# the engines' plug-ins (the collage target depends on them), not the tests.
demo: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(LAUNCHER) >/dev/null
	cmake --build $(BUILD_DIR) -j $(JOBS) --target collage
	./$(BUILD_DIR)/collage demo

test: test-deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) fuzz

deps:
	./scripts/install_deps.sh
	./scripts/install_engines.sh $(BUILD_DIR)

test-deps:
	./scripts/install_deps.sh --test
	./scripts/install_engines.sh $(BUILD_DIR)
	./scripts/install_python_deps.sh $(BUILD_DIR)
	./scripts/install_quantizer.sh $(BUILD_DIR)
	./scripts/install_ray.sh $(BUILD_DIR)

build: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(LAUNCHER) >/dev/null
	cmake --build $(BUILD_DIR) -j $(JOBS)

# One clang build with AddressSanitizer + UndefinedBehaviorSanitizer serves four checks:
# the unit tests (in one shard per core: the binary runs its tests one after another), the ONNX
# node conformance cases (about 40 s) and the differential harness of the backends run once
# more under the sanitizers (any report fails), and the libFuzzer targets (the model loader,
# plans, .npy and .pb tensors, the cost database) run for a short while each (any crash fails).
# clang links LLVM's libomp, while Debian's OpenBLAS OpenMP build is linked to libgomp, and
# OpenBLAS's threaded GEMM waits for its sibling threads by spinning: with both runtimes in
# one process it hung for good (on a 2-vCPU AVX2 EPYC, whatever OMP_NUM_THREADS said). The
# sanitizer build therefore leaves the openblas backend out; the release build tests it on
# its own runtime.
# As tests/conformance/CMakeLists.txt says: node cases whose data contradicts their model.
NODE_CASES_WITH_BAD_DATA := $(foreach c,BFLOAT16_to_FLOAT BFLOAT16_to_FLOAT_expanded FLOAT_to_BFLOAT16 \
  FLOAT_to_BFLOAT16_expanded,--exclude test_castlike_$(c))
# Line tables are all a sanitizer report needs (file:line of every frame, inlined ones
# included); full debug information made each object 1.6-1.8x larger and its compile 4-11%
# slower (two sources timed with clang 14).
SANITIZER_OPT := -O2 -gline-tables-only -DNDEBUG
SANITIZER_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
sanitize: test-deps
	CC=clang CXX=clang++ cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(LAUNCHER) \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SANITIZER_OPT)" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$(SANITIZER_OPT)" \
	  -DCOLLAGE_SANITIZE=ON -DCOLLAGE_FUZZ=ON -DCOLLAGE_SKIP_BACKENDS=openblas >/dev/null
	cmake --build $(ASAN_DIR) -j $(JOBS) --target collage_unit_tests collage collage_fuzzers \
	  collage_backend_ops collage_conformance
	$(SANITIZER_ENV) ./scripts/run_test_shards.sh $(JOBS) $(ASAN_DIR)/unit_tests \
	  ./$(ASAN_DIR)/tests/collage_unit_tests --gtest_brief=1 --gtest_filter=-$(ASAN_SKIP)
	./scripts/gen_conformance_cases.sh $(ASAN_DIR)/conformance_cases/onnx
	$(SANITIZER_ENV) ./$(ASAN_DIR)/tests/collage_conformance $(ASAN_DIR)/conformance_cases/onnx/node \
	  $(NODE_CASES_WITH_BAD_DATA) > $(ASAN_DIR)/conformance.log || { tail -40 $(ASAN_DIR)/conformance.log; exit 1; }
	tail -1 $(ASAN_DIR)/conformance.log
	$(SANITIZER_ENV) ./$(ASAN_DIR)/tests/backend_ops/collage_backend_ops > $(ASAN_DIR)/backend_ops.log \
	  || { tail -40 $(ASAN_DIR)/backend_ops.log; exit 1; }
	tail -1 $(ASAN_DIR)/backend_ops.log

fuzz: sanitize
	COLLAGE_FUZZ_BUILD_DIR=$(ASAN_DIR) ./scripts/fuzz_smoke.sh 20 10

# collage against ONNX Runtime, OpenVINO, TVM and PyTorch on every zoo workload (tens of
# minutes; not part of `make test`): bench/results/compare.{md,json,png}.
COMPARE_ARGS ?=
compare: build
	./bench/compare/setup.sh
	bench/.venv/bin/python bench/compare/compare.py --build $(BUILD_DIR) $(COMPARE_ARGS)

# Each engine inside collage against its own package (bench/compare/parity.py; docs/measurements.md,
# "Engines against their own packages"): every zoo and PyTorch-exported model, 1 and 2 threads.
parity: build
	./bench/compare/setup.sh
	bench/.venv/bin/python bench/compare/parity.py --build $(BUILD_DIR) $(PARITY_ARGS)

# Static analysis with the checks in .clang-tidy (not part of `make test`: slow on 2 cores).
tidy: build
	run-clang-tidy -quiet -p $(BUILD_DIR) 'src/|tools/' 2>/dev/null | grep -E "warning:|error:" | sort -u || true

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
