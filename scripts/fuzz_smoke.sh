#!/usr/bin/env bash
# Fuzz smoke test of the ONNX frontend: builds tests/fuzz/model_loader_fuzzer with clang
# (libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer) into build-fuzz/ and runs it
# for a short while on the seed corpus. Fails on any crash, leak, sanitizer report, timeout
# or out-of-memory.
#
#   scripts/fuzz_smoke.sh            # 20 seconds
#   scripts/fuzz_smoke.sh 300        # longer
#   JOBS=4 scripts/fuzz_smoke.sh     # build parallelism (default 2)
#
# Needs clang++ and libclang-rt-14-dev (apt-get install clang libclang-rt-14-dev).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${COLLAGE_FUZZ_BUILD_DIR:-$root/build-fuzz}")
seconds=${1:-20}

if ! command -v clang++ >/dev/null; then
  echo "fuzz_smoke: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi

if [[ ! -f "$build/build.ninja" ]]; then
  CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCOLLAGE_FUZZ=ON -DCOLLAGE_NATIVE_ARCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
start=$(date +%s)
ninja -C "$build" -j"${JOBS:-2}" model_loader_fuzzer
echo "fuzz_smoke: build took $(( $(date +%s) - start )) s"

# New inputs go to a scratch copy of the corpus, not into the committed seeds; the fuzzer
# runs inside it so that relative external-data paths in mutated models stay in there.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$build/fuzz-artifacts"
cp "$root"/tests/fuzz/corpus/* "$work/corpus/"
cd "$work"
if ! "$build/model_loader_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/" corpus; then
  echo "fuzz_smoke: FAILED; the crashing input is in $build/fuzz-artifacts/" >&2
  exit 1
fi
echo "fuzz_smoke: OK (${seconds}s without a crash)"
