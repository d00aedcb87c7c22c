#!/usr/bin/env bash
# Installs ONNX Runtime's quantizer, which the tests use to make int8 models from float ones
# (scripts/quantize_models.py), into a virtual environment of the build, never elsewhere:
#
#   scripts/install_quantizer.sh BUILD_DIR      → BUILD_DIR/quantenv/
#
# Its own environment, without Debian's packages: the quantizer needs newer onnx and numpy
# than Debian 12 has (onnx.reference, ml_dtypes), while the other test tools need Debian's
# (PyTorch is built against its numpy). sympy: the quantizer's preparation step (shape inference). onnxruntime is the version the onnxruntime backend
# links (backends/onnxruntime/dependencies), so that the outputs the tests compare with are
# those of the same library.
#
# Fast when everything is there. Where the package index cannot be reached, it says so and
# exits 0: the tests of quantized models are then not registered.
set -euo pipefail

BUILD_DIR=${1:?usage: install_quantizer.sh BUILD_DIR}
PYTHON=${COLLAGE_PYTHON:-/usr/bin/python3}
ENV="$BUILD_DIR/quantenv"
ORT=$(grep -o 'onnxruntime==[0-9.]*' "$(dirname "${BASH_SOURCE[0]}")/../backends/onnxruntime/dependencies")
# Pinned, so that a build is the same build tomorrow.
WANT="$ORT onnx==1.23.2 numpy==2.4.6 ml_dtypes==0.7.0 protobuf==7.36.2 flatbuffers==25.12.19 packaging==26.4 sympy==1.14.0 mpmath==1.3.0"

source "$(dirname "${BASH_SOURCE[0]}")/python_env.sh"
make_python_env "$ENV" "$PYTHON" "$WANT" "the tests of quantized models will not run"
