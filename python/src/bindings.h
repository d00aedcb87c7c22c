// The parts of the extension module _collage, one per file; module.cc calls each.
// python/collage/ wraps them in the package's public API (InferenceSession, optimize, ...).
#pragma once

#include <nanobind/nanobind.h>

namespace collage::python {

// Status → the package's exception classes (status_error.cc).
void BindErrors(nanobind::module_& m);
// The session: load, inputs and outputs, run (session_binding.cc).
void BindSession(nanobind::module_& m);
// Measure and place: optimize (optimize_binding.cc).
void BindOptimize(nanobind::module_& m);
// A request to stop an optimize, passed with the call (cancellation_binding.cc).
void BindCancellation(nanobind::module_& m);
// The registered backends and those left out of the build (backends_binding.cc).
void BindBackends(nanobind::module_& m);

}  // namespace collage::python
