#!/bin/bash
# Installs this build into a temporary prefix (cmake --install), builds an application
# (tests/install/consumer) and an out-of-tree backend plug-in (tests/install/plugin, from the
# example backend's source) against it, and runs them with the installed command line.
#   install_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER
set -euo pipefail
build=$1 source=$2 cxx=$3
work=$(mktemp -d /tmp/collage-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { echo "== $*"; }
step "cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for must in bin/collage bin/collage_measure_worker include/collage/session.h \
            include/collage/report.h include/collage/zoo.h include/collage/available_backends.h \
            include/collage/sdk/backend.h lib/cmake/collage/collageConfig.cmake; do
  [[ -e $prefix/$must ]] || { echo "not installed: $must"; exit 1; }
done
ls "$prefix"/lib/libcollage.so* > /dev/null
# Nothing of the source tree's private headers is installed.
if [[ -d $prefix/include/ir || -d $prefix/include/src ]]; then echo "private headers installed"; exit 1; fi

launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
for project in consumer plugin; do
  step "building tests/install/$project against the installed collage"
  extra=()
  [[ $project == plugin ]] && extra=(-DPLUGIN_SOURCE="$source/backends/plugin_example/plugin_example_backend.cc")
  cmake -S "$source/tests/install/$project" -B "$work/$project" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" -DCMAKE_PREFIX_PATH="$prefix" "${extra[@]}" \
        > "$work/$project.log" || { cat "$work/$project.log"; exit 1; }
  cmake --build "$work/$project" > "$work/$project-build.log" || { cat "$work/$project-build.log"; exit 1; }
done
plugin=$work/plugin/libcollage_plugin_example.so

step "the installed command line"
"$prefix/bin/collage" --version | head -1
"$prefix/bin/collage" backends --backend-path "$work/plugin" | grep -q plugin_example \
  || { echo "the installed collage does not list the out-of-tree plug-in"; exit 1; }
"$prefix/bin/collage" zoo export dcgan -o "$work/dcgan.onnx" > /dev/null

step "the application: plug-in, optimize, plan, run"
COLLAGE_CACHE_DIR=$work/cache "$work/consumer/consumer" "$work/dcgan.onnx" "$plugin" "$work"
echo "install test: passed"
