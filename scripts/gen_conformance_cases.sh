#!/bin/bash
# Generates the ONNX node conformance cases into OUT_DIR/node/<case>/ (model.onnx +
# test_data_set_0/{input,output}_N.pb), for collage_conformance.
#
# Usage: scripts/gen_conformance_cases.sh OUT_DIR
#
# Uses ../shared/tools/gen_onnx_node_tests.py beside the repository (override with
# COLLAGE_ONNX_NODE_TEST_GENERATOR=PATH) and Debian's python3-onnx (apt-get install python3-onnx),
# run with /usr/bin/python3 (override with COLLAGE_PYTHON). Idempotent and fast when done: OUT_DIR
# carries a stamp of the generator's contents and the onnx version, and is regenerated only when
# they change. Generates into a temporary sibling folder and renames it into place, so an
# interrupted run never leaves a half-written OUT_DIR.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
generator=${COLLAGE_ONNX_NODE_TEST_GENERATOR:-$here/../../shared/tools/gen_onnx_node_tests.py}
python=${COLLAGE_PYTHON:-/usr/bin/python3}

if [ ! -f "$generator" ]; then
  echo "$0: generator not found: $generator (expected shared/ beside the repository)" >&2
  exit 1
fi
if ! onnx_version=$("$python" -c 'import onnx; print(onnx.__version__)' 2>/dev/null); then
  echo "$0: $python cannot import onnx; install it with: apt-get install python3-onnx" >&2
  exit 1
fi
stamp="generator-sha256 $(sha256sum "$generator" | cut -d' ' -f1) onnx $onnx_version"
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ]; then
  echo "conformance cases in $out are up to date"
  exit 0
fi

mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d "$out.tmp.XXXXXX")
trap 'rm -rf "$tmp" "$tmp.log"' EXIT
start=$(date +%s)
if ! "$python" "$generator" "$tmp" >"$tmp.log" 2>&1; then
  cat "$tmp.log" >&2
  rm -f "$tmp.log"
  echo "$0: the generator failed" >&2
  exit 1
fi
rm -f "$tmp.log"
count=$(find "$tmp/node" -mindepth 2 -maxdepth 2 -name model.onnx 2>/dev/null | wc -l)
# onnx 1.12 writes about 900 cases; far fewer means the generator broke half way.
if [ "$count" -lt 500 ]; then
  echo "$0: the generator wrote only $count node cases into $tmp/node" >&2
  exit 1
fi
echo "$stamp" >"$tmp/.stamp"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "generated $count node conformance cases into $out/node in $(( $(date +%s) - start )) s"
