# The two commands of the README:
#   make demo   build collage and run the main job on a built-in model
#   make test   build everything and run every test (unit, conformance, exporter models,
#               sanitizers, fuzzing); installs what it needs first
BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
JOBS      ?= $(shell nproc)

.PHONY: demo test deps test-deps build sanitize fuzz tidy clean

demo: build
	./$(BUILD_DIR)/collage demo

test: test-deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) sanitize
	$(MAKE) fuzz

deps:
	./scripts/install_deps.sh

test-deps:
	./scripts/install_deps.sh --test

build: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Unit tests once more under AddressSanitizer + UndefinedBehaviorSanitizer; any report fails.
sanitize: deps
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLAGE_SANITIZE=ON >/dev/null
	cmake --build $(ASAN_DIR) -j $(JOBS) --target collage_unit_tests collage
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ./$(ASAN_DIR)/tests/collage_unit_tests --gtest_brief=1

# A short libFuzzer run of the model loader (seconds); any crash fails.
fuzz: test-deps
	./scripts/fuzz_smoke.sh

# Static analysis with the checks in .clang-tidy (not part of `make test`: slow on 2 cores).
tidy: build
	run-clang-tidy -quiet -p $(BUILD_DIR) 'src/|tools/' 2>/dev/null | grep -E "warning:|error:" | sort -u || true

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) build-fuzz
