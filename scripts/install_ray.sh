#!/usr/bin/env bash
# Installs Ray into a virtual environment of the build, never elsewhere, for
# `collage optimize --workers ray` and its tests (tests/ray/):
#
#   scripts/install_ray.sh BUILD_DIR      → BUILD_DIR/rayenv/
#
# Point COLLAGE_RAY_PYTHON at BUILD_DIR/rayenv/bin/python to optimize with it, and start the
# cluster's nodes with BUILD_DIR/rayenv/bin/ray (README, "Fanning measurement out with Ray").
# Made from Debian's Python (/usr/bin/python3; override with COLLAGE_PYTHON) without its
# system packages: Ray brings its own dependencies, pinned by its version. Every node and
# the optimizing machine must run the same Ray and Python versions.
#
# Fast when everything is there. Where the package index cannot be reached, it says so and
# exits 0: the Ray tests are then not registered, and everything else works.
set -euo pipefail

BUILD_DIR=${1:?usage: install_ray.sh BUILD_DIR}
PYTHON=${COLLAGE_PYTHON:-/usr/bin/python3}
ENV="$BUILD_DIR/rayenv"
# Pinned, so that a build is the same build tomorrow.
WANT="ray==2.60.0"

source "$(dirname "${BASH_SOURCE[0]}")/python_env.sh"
make_python_env "$ENV" "$PYTHON" "$WANT" "collage optimize --workers ray needs a Python with Ray, and its tests are left out"
