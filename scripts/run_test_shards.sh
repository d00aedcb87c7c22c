#!/usr/bin/env bash
# Runs a Google Test binary as SHARDS processes at once, by gtest's own sharding (each test
# runs in exactly one shard), so that a serial test binary uses every core. Each shard writes
# LOG_PREFIX.K.log; this prints every shard's summary, the log of each shard that failed, and
# exits non-zero when any failed. The environment (sanitizer options) passes to every shard.
#
#   scripts/run_test_shards.sh 2 build-asan/unit_tests build-asan/tests/collage_unit_tests --gtest_brief=1
set -uo pipefail

if (( $# < 3 )); then
  echo "usage: $0 SHARDS LOG_PREFIX BINARY [ARGS...]" >&2
  exit 2
fi
shards=$1 prefix=$2
shift 2

# Job control on: without it a script's background commands start with SIGINT ignored, which
# the tests' child processes would inherit (the command line keeps an ignored SIGINT ignored,
# as a background job's, and its interrupt tests then fail). Each shard is then a process
# group of its own, which an interrupt of this script ends.
set -m
pids=()
trap 'for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done; exit 130' INT TERM
for (( k = 0; k < shards; ++k )); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$k "$@" > "$prefix.$k.log" 2>&1 &
  pids+=("$!")
done
set +m  # the shards are started; no job notices in the output

failed=0
for (( k = 0; k < shards; ++k )); do
  if wait "${pids[$k]}"; then
    echo "shard $k of $shards: $(grep -E '^\[==========\].*ran' "$prefix.$k.log" | tail -1)"
  else
    status=$?
    echo "shard $k of $shards FAILED (exit $status); its log, $prefix.$k.log, ends:" >&2
    tail -200 "$prefix.$k.log" >&2
    failed=1
  fi
done
exit $failed
