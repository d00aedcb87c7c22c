#!/usr/bin/env bash
# Installs the engines that Debian 12 does not package, into a folder of the build, where the
# backends/onnxruntime and backends/openvino folders look for them:
#
#   scripts/install_engines.sh BUILD_DIR      → BUILD_DIR/engines/
#
#   engines/lib/python3.X/site-packages/onnxruntime/capi/libonnxruntime.so.*   (PyPI wheel)
#   engines/lib/python3.X/site-packages/openvino/{libs,include,cmake}          (PyPI wheel)
#   engines/onnxruntime-headers/include/onnxruntime/*.h     (Debian's libonnxruntime-dev)
#   engines/lib/libmkl_*.so.3, engines/include/mkl*.h, engines/lib/cmake/mkl (PyPI mkl,
#                                                     mkl-include, mkl-devel)
#
# Only the native libraries of the wheels are used (no Python module is imported), so they are
# installed without their Python dependencies; for MKL that also keeps Intel's OpenMP runtime
# and TBB out (MKL runs on GNU OpenMP, the pool collage's other libraries share). ONNX Runtime's wheel has no C headers; its C API
# is versioned and backward compatible, so the headers of Debian's next release (C API 21)
# serve the wheel's library (which serves API versions 1-32).
#
# Fast when everything is there. Where the package index or the archive cannot be reached,
# it says so and exits 0: the build then skips those backends, with a message.
# COLLAGE_ENGINES=none skips this script.
set -euo pipefail

BUILD_DIR=${1:?usage: install_engines.sh BUILD_DIR}
if [[ "${COLLAGE_ENGINES:-}" == "none" ]]; then
  exit 0
fi
ENGINES="$BUILD_DIR/engines"
mkdir -p "$ENGINES"

# Pinned: the versions go into the cost database's key through each backend's version().
ORT_WHEEL=onnxruntime==1.32.0
OPENVINO_WHEEL=openvino==2026.4.1
MKL_WHEELS="mkl==2026.2.1 mkl-include==2026.2.1 mkl-devel==2026.2.1"
ORT_DEB=pool/main/o/onnxruntime/libonnxruntime-dev_1.21.0+dfsg-1_amd64.deb
ORT_DEB_SHA256=14f7d959d5deacbcf1504830d4189f91fc67382b399ed9ae9d3aa9c4050ced08
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

PYTHON=$(command -v python3)
STAMP="$ENGINES/.installed"
want="$ORT_WHEEL $OPENVINO_WHEEL $MKL_WHEELS $ORT_DEB $($PYTHON -c 'import sys; print(sys.version_info[:2])')"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  exit 0
fi

warn() { echo "install_engines.sh: $*; the engines' backends will be skipped" >&2; }

# The wheels: --no-deps because only their shared libraries are used.
if ! "$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --no-warn-script-location \
    --prefix "$ENGINES" "$ORT_WHEEL" "$OPENVINO_WHEEL" $MKL_WHEELS; then
  warn "pip could not install $ORT_WHEEL $OPENVINO_WHEEL $MKL_WHEELS"
  exit 0
fi

# The library's SONAME is libonnxruntime.so.1; the wheel ships only the full version.
ort_lib=$(ls "$ENGINES"/lib/python3*/site-packages/onnxruntime/capi/libonnxruntime.so.1.* 2>/dev/null | head -1 || true)
if [[ -n "$ort_lib" ]]; then
  ln -sf "$(basename "$ort_lib")" "$(dirname "$ort_lib")/libonnxruntime.so.1"
fi

headers="$ENGINES/onnxruntime-headers"
if [[ ! -f "$headers/include/onnxruntime/onnxruntime_c_api.h" ]]; then
  deb="$ENGINES/libonnxruntime-dev.deb"
  if ! curl -fsSL -o "$deb" "$DEBIAN_MIRROR/$ORT_DEB"; then
    warn "could not download $DEBIAN_MIRROR/$ORT_DEB"
    rm -f "$deb"
    exit 0
  fi
  if ! echo "$ORT_DEB_SHA256  $deb" | sha256sum -c --quiet -; then
    warn "$ORT_DEB does not have the expected SHA-256"
    rm -f "$deb"
    exit 0
  fi
  unpacked="$ENGINES/libonnxruntime-dev"
  rm -rf "$unpacked"
  dpkg-deb -x "$deb" "$unpacked"
  mkdir -p "$headers/include"
  rm -rf "$headers/include/onnxruntime"
  mv "$unpacked/usr/include/onnxruntime" "$headers/include/onnxruntime"
  rm -rf "$unpacked" "$deb"
fi
echo "$want" > "$STAMP"
