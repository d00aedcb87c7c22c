#!/usr/bin/env bash
# Installs what the Python package (python/) needs to be built and tested, into a virtual
# environment of the build, never elsewhere:
#
#   scripts/install_python_deps.sh BUILD_DIR      → BUILD_DIR/pyenv/
#
# The environment is made from Debian's Python (/usr/bin/python3; override with
# COLLAGE_PYTHON) with its system packages visible, so numpy and onnx come from Debian
# (python3-numpy, python3-onnx: scripts/install_deps.sh --test) and only nanobind (the
# bindings) and pytest come from the package index. The CMake build then finds nanobind
# there and builds the module; without the environment it leaves the module out, with a
# message.
#
# Fast when everything is there. Where the package index cannot be reached, it says so and
# exits 0: the build then leaves the Python module out and its tests are not registered.
set -euo pipefail

BUILD_DIR=${1:?usage: install_python_deps.sh BUILD_DIR}
PYTHON=${COLLAGE_PYTHON:-/usr/bin/python3}
ENV="$BUILD_DIR/pyenv"
# Pinned, so that a build is the same build tomorrow.
WANT="nanobind==3.1.0 pytest==9.2.0"

source "$(dirname "${BASH_SOURCE[0]}")/python_env.sh"
make_python_env "$ENV" "$PYTHON" "$WANT" "the Python module will not be built" --system-site-packages
