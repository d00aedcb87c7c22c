#!/usr/bin/env bash
# Fuzz smoke test of collage's readers: builds the libFuzzer targets of tests/fuzz/ with clang
# (libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer) into build-fuzz/ and runs each
# for a short while on its seeds, tests/fuzz/corpus/<name>/. Fails on any crash, leak,
# sanitizer report, timeout or out-of-memory of any target; prints, per target, how long it
# ran and how many inputs it executed.
#
#   scripts/fuzz_smoke.sh            # the model loader 20 s, every other target 10 s
#   scripts/fuzz_smoke.sh 300        # the loader 300 s, the others 150 s each
#   scripts/fuzz_smoke.sh 20 5       # the loader 20 s, the others 5 s each
#   FUZZ_TARGETS="npy plan" scripts/fuzz_smoke.sh   # some targets only
#   JOBS=4 scripts/fuzz_smoke.sh     # build parallelism (default 2)
#
# Targets: model_loader (ONNX models), plan (plan JSON), npy (.npy tensors), tensor_proto
# (.pb tensors), cost_database (damaged SQLite cost databases).
# Needs clang++ and libclang-rt-14-dev (apt-get install clang libclang-rt-14-dev).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${COLLAGE_FUZZ_BUILD_DIR:-$root/build-fuzz}")
loader_seconds=${1:-20}
other_seconds=${2:-$(( (loader_seconds + 1) / 2 ))}
read -r -a targets <<< "${FUZZ_TARGETS:-model_loader plan npy tensor_proto cost_database}"

if ! command -v clang++ >/dev/null; then
  echo "fuzz_smoke: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi

if [[ ! -f "$build/build.ninja" ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCOLLAGE_FUZZ=ON -DCOLLAGE_NATIVE_ARCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
start=$(date +%s)
ninja -C "$build" -j"${JOBS:-2}" "${targets[@]/%/_fuzzer}"
echo "fuzz_smoke: build took $(( $(date +%s) - start )) s"

# New inputs go to scratch copies of the corpora, not into the committed seeds; each fuzzer
# runs inside its own scratch folder, so that the files the readers are given (and the
# external data and moved-aside databases they lead to) stay in there. In memory where
# there is a tmpfs: SQLite syncs every cost database it writes, which on a busy disk took
# 25 ms an input (10x fewer inputs than on /dev/shm).
work=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$build/fuzz-artifacts"
failed=()
summary=()
for name in "${targets[@]}"; do
  fuzzer="$build/${name}_fuzzer"
  seconds=$other_seconds
  [[ "$name" == model_loader ]] && seconds=$loader_seconds
  mkdir -p "$work/$name/corpus"
  cp "$root/tests/fuzz/corpus/$name"/* "$work/$name/corpus/"
  log="$build/fuzz-artifacts/${name}_fuzzer.log"
  began=$(date +%s.%N)
  rc=0
  (cd "$work/$name" && "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/${name}_fuzzer-" \
    corpus) > "$log" 2>&1 || rc=$?
  ran=$(awk -v a="$began" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  line=$(printf '%-14s %6s s %10s inputs' "$name" "$ran" "${runs:-?}")
  if (( rc != 0 )); then
    tail -40 "$log" >&2
    echo "fuzz_smoke: $name FAILED (exit $rc); log $log, crashing input in $build/fuzz-artifacts/" >&2
    failed+=("$name")
    line+="  FAILED"
  fi
  summary+=("$line")
  echo "fuzz_smoke: $line"
done

echo "fuzz_smoke: target          ran       executed"
printf 'fuzz_smoke: %s\n' "${summary[@]}"
if (( ${#failed[@]} > 0 )); then
  echo "fuzz_smoke: FAILED: ${failed[*]} (reproduce: $build/<name>_fuzzer FILE)" >&2
  exit 1
fi
echo "fuzz_smoke: OK (every target ran without a crash)"
