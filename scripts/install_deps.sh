#!/usr/bin/env bash
# Installs what collage needs to build and test, from Debian's packages only, and only
# what is missing (fast when everything is there). Needs root (or sudo) for apt-get.
set -euo pipefail

BUILD_PACKAGES=(
  cmake ninja-build g++ pkg-config ccache
  libonnx-dev libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev
  libxml2-dev  # the unit tests parse the placement report's SVG
  libpq-dev    # a team's PostgreSQL cost database (optional: without it, SQLite only)
)
# The libraries of the backends: each backend folder names its own (backends/*/dependencies).
source "$(dirname "${BASH_SOURCE[0]}")/backend_dependencies.sh"
check_backend_dependencies
mapfile -t backend_package_lines < <(backend_dependencies apt)
read -r -a backend_packages <<< "${backend_package_lines[*]:-}"
BUILD_PACKAGES+=("${backend_packages[@]}")
# Tests also need: the ONNX Python package (generates the ONNX node conformance cases),
# PyTorch + torchvision (export models through another exporter), clang + libFuzzer,
# Graphviz's dot (the report's layout), Chromium (the report rendered headless to a PNG),
# PostgreSQL's server programs (initdb, pg_ctl: the shared cost database's tests),
# and for the Python package (python/) Python's headers and venv
# (scripts/install_python_deps.sh).
TEST_PACKAGES=(
  python3-onnx python3-numpy python3-torch python3-torchvision python3-dev python3-venv
  clang libclang-rt-14-dev libomp-dev
  graphviz chromium
  postgresql  # the PostgreSQL cost database's tests start a server of their own
)

want=("${BUILD_PACKAGES[@]}")
if [[ "${1:-}" == "--test" ]]; then
  want+=("${TEST_PACKAGES[@]}")
fi

missing=()
for pkg in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
