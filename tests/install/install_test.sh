#!/bin/bash
# Installs this build into a temporary prefix (cmake --install), moves the prefix elsewhere,
# builds an application (tests/install/consumer) and an out-of-tree backend plug-in
# (tests/install/plugin, from the example backend's C source, by C_COMPILER: the other
# compiler of the machine than collage's, where it has two) against the moved prefix, and runs
# them and the installed command line with the build tree hidden (a private mount namespace
# lays an empty folder over it; where the test may not make one, it checks instead that no
# installed file looks into the build tree). Then removes one engine's library from the
# prefix: its backend is listed as unavailable, saying what is missing, and the rest runs.
#   install_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER C_COMPILER
set -euo pipefail
build=$(realpath "$1") source=$(realpath "$2") cxx=$3 cc=$4
work=$(mktemp -d /tmp/collage-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { echo "== $*"; }
fail() { echo "install test: $*"; exit 1; }
step "cmake --install into $work/first-prefix, then moved to $prefix"
cmake --install "$build" --prefix "$work/first-prefix" > "$work/install.log"
mv "$work/first-prefix" "$prefix"
for must in bin/collage bin/collage_measure_worker include/collage/session.h \
            include/collage/report.h include/collage/zoo.h include/collage/available_backends.h \
            include/collage/sdk/backend.h lib/cmake/collage/collageConfig.cmake; do
  [[ -e $prefix/$must ]] || fail "not installed: $must"
done
ls "$prefix"/lib/libcollage.so* > /dev/null
# Nothing of the source tree's private headers is installed.
if [[ -d $prefix/include/ir || -d $prefix/include/src ]]; then fail "private headers installed"; fi
# The search paths of every installed program and library are relative or system folders.
while IFS= read -r -d '' elf; do
  if readelf -d "$elf" 2> /dev/null | grep -E 'R(UN)?PATH' | grep -qE "$build|$work/first-prefix"; then
    fail "$elf searches the build tree or the prefix it was installed to: $(readelf -d "$elf" | grep -E 'R(UN)?PATH')"
  fi
done < <(find "$prefix/bin" "$prefix/lib" -type f \( -name '*.so*' -o -perm -u+x \) -print0)

launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
for project in consumer plugin; do
  step "building tests/install/$project against the moved prefix"
  extra=()
  [[ $project == plugin ]] && extra=(-DPLUGIN_SOURCE="$source/backends/plugin_example/plugin_example.c" -DCMAKE_C_COMPILER="$cc")
  cmake -S "$source/tests/install/$project" -B "$work/$project" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" -DCMAKE_PREFIX_PATH="$prefix" "${extra[@]}" \
        > "$work/$project.log" || { cat "$work/$project.log"; exit 1; }
  cmake --build "$work/$project" > "$work/$project-build.log" || { cat "$work/$project-build.log"; exit 1; }
done
# The plug-in says which compiler built it (its .comment section): where collage was built by
# gcc, the plug-in was to be built by clang (tests/CMakeLists.txt chose C_COMPILER).
echo "the plug-in's .comment section (its compiler, and gcc's for the C run-time files): $(readelf -p .comment "$work/plugin/libcollage_plugin_example.so" | grep -Eo '(clang version|GCC: \([^)]*\)) [0-9.]+' | sort -u | tr '\n' ' ')"
if [[ $(basename "$cc") == clang* ]]; then
  readelf -p .comment "$work/plugin/libcollage_plugin_example.so" | grep -q "clang version" \
    || fail "the out-of-tree plug-in was to be built by $cc"
fi
"$prefix/bin/collage" zoo export dcgan -o "$work/dcgan.onnx" > /dev/null
# The engines' backends this build has: the moved prefix must have them too.
engines=$("$build/collage" backends | awk 'NR > 1 && $2 == "cpu" && ($1 == "onnxruntime" || $1 == "openvino" || $1 == "mkl") {print $1}')

# Runs a command with the build tree hidden, where a private mount namespace can be had.
hidden() {
  if unshare -m true 2> /dev/null; then
    unshare -m bash -c 'mount -t tmpfs collage-build-hidden "$1" && shift && exec "$@"' _ "$build" "$@"
  else
    echo "(no private mount namespace here: the build tree stays visible; the search paths were checked above)"
    COLLAGE_INSTALL_TEST_VISIBLE=1 "$@"
  fi
}

installed_steps() {
  [[ ! -e $build/CMakeCache.txt || ${COLLAGE_INSTALL_TEST_VISIBLE:-} == 1 ]] || fail "the build tree is not hidden"
  step "the moved command line: every engine backend of the build is there"
  "$prefix/bin/collage" --version | head -1
  listed=$("$prefix/bin/collage" backends --backend-path "$work/plugin")
  echo "$listed" | grep -q plugin_example || fail "the installed collage does not list the out-of-tree plug-in"
  for engine in $engines; do
    echo "$listed" | awk -v e="$engine" '$1 == e && $2 == "cpu"' | grep -q . \
      || fail "the moved install lacks the $engine backend: $(echo "$listed" | grep "$engine")"
    "$prefix/bin/collage" run "$work/dcgan.onnx" --backend "$engine" --random-inputs --check > "$work/run-$engine.log" \
      || { cat "$work/run-$engine.log"; fail "the moved install does not run dcgan on $engine"; }
  done
  step "the application: plug-in, optimize, plan, run"
  COLLAGE_CACHE_DIR=$work/cache "$work/consumer/consumer" "$work/dcgan.onnx" "$work/plugin/libcollage_plugin_example.so" "$work"
}

removed_engine_steps() {
  engine=$1 library=$2
  step "the $engine engine's library removed: its backend is unavailable, the rest runs"
  listed=$("$prefix/bin/collage" backends)
  # Long reasons are wrapped onto indented lines: read them joined.
  echo "$listed" | sed -z 's/\n  */ /g' | tr -d '\0' | grep -E "^$engine +unavailable: .*$library" > /dev/null \
    || fail "collage backends does not say $engine is unavailable for want of $library: $listed"
  "$prefix/bin/collage" run "$work/dcgan.onnx" --backend native --random-inputs > /dev/null || fail "native no longer runs"
  if "$prefix/bin/collage" run "$work/dcgan.onnx" --backend "$engine" --random-inputs > "$work/refused.log" 2>&1; then
    fail "a run on the unavailable $engine backend did not fail"
  fi
  grep -q "$engine" "$work/refused.log" || { cat "$work/refused.log"; fail "the refusal does not name $engine"; }
}

# The steps run in a child bash (inside the namespace): it gets them and their variables
# through the environment.
export build work prefix engines
export -f step fail installed_steps removed_engine_steps
hidden bash -euo pipefail -c installed_steps
if [[ -n $engines ]]; then
  engine=$(echo "$engines" | head -1)
  case $engine in
    onnxruntime) library=libonnxruntime ;;
    openvino) library=libopenvino ;;
    mkl) library=libmkl_ ;;
  esac
  rm -f "$prefix"/lib/collage_engines/"$library"*
  hidden bash -euo pipefail -c 'removed_engine_steps "$0" "$1"' "$engine" "$library"
fi
echo "install test: passed"
