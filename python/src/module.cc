// The extension module collage._collage. The package's __init__.py sets the OpenMP wait
// policy and the measurement worker's path before importing it (libgomp reads its settings
// once, when it is loaded with this module).
#include "bindings.h"
#include "collage/openmp_spin_count.h"
#include "collage/version.h"

NB_MODULE(_collage, m) {
  m.doc() = "collage's C++ library; use the package collage, not this module";
  m.attr("__version__") = collage::Version();
  // The package sets GOMP_SPINCOUNT to this before the module loads; a test checks that the
  // two agree.
  m.attr("OPENMP_SPIN_COUNT") = collage::kOpenMpSpinCount;
  collage::python::BindErrors(m);
  collage::python::BindSession(m);
  collage::python::BindCancellation(m);
  collage::python::BindOptimize(m);
  collage::python::BindBackends(m);
}
