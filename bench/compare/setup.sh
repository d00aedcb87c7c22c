#!/usr/bin/env bash
# The other runtimes of the comparison, in their own virtual environment (bench/.venv),
# from the Python package index; never part of the tests. It sees Debian's PyTorch (which
# the tests install) and adds ONNX Runtime, OpenVINO, Apache TVM, onnx2torch and matplotlib.
# Fast when everything is there.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=bench/.venv
if ! dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q "install ok installed"; then
  apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
fi
if [[ ! -x $VENV/bin/python ]]; then
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
# numpy below 2: Debian's PyTorch is built against numpy 1.x. TVM's ONNX frontend needs a
# newer onnx than Debian's.
"$VENV/bin/pip" install -q --disable-pip-version-check "numpy<2" "onnx>=1.16,<1.18" onnxruntime openvino \
  apache-tvm onnx2torch matplotlib
