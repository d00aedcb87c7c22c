# Sourced by the scripts that install a Python environment into a folder of the build
# (install_python_deps.sh, install_quantizer.sh, install_ray.sh): one function that makes it.
#
#   make_python_env ENV PYTHON "PINNED PACKAGES" "WHAT IS LOST WITHOUT IT" [VENV OPTIONS...]
#
# Does nothing when ENV already holds those packages for that Python (a stamp file says so).
# Where the environment cannot be made or the package index cannot be reached, it says so,
# removes the half-made ENV and returns 0: the build goes on without what it was for.

make_python_env() {
  local env=$1 python=$2 want_packages=$3 lost=$4
  shift 4
  local stamp="$env/.installed"
  local want
  want="$want_packages $("$python" -c 'import sys; print(sys.version_info[:3])')"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return 0
  fi
  local me
  me=$(basename "$0")
  mkdir -p "$(dirname "$env")"
  rm -rf "$env"
  if ! "$python" -m venv "$@" "$env"; then
    echo "$me: $python could not make a virtual environment (apt-get install python3-venv); $lost" >&2
    rm -rf "$env"
    return 0
  fi
  # shellcheck disable=SC2086 # the packages are words
  if ! "$env/bin/python" -m pip install -q --disable-pip-version-check $want_packages; then
    echo "$me: pip could not install $want_packages; $lost" >&2
    rm -rf "$env"
    return 0
  fi
  echo "$want" > "$stamp"
}
