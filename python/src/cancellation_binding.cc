// collage._collage.CancellationToken: the library's CancellationToken (collage/cancellation.h)
// for Python. collage.optimize passes one with the call; cancelling it from any thread stops
// that optimize at its next safe point (CancelledError), keeping every measurement made.
#include "bindings.h"
#include "collage/cancellation.h"

namespace nb = nanobind;

namespace collage::python {

void BindCancellation(nb::module_& m) {
  nb::class_<CancellationToken>(m, "CancellationToken",
                                "A request to stop an optimize: pass it as collage.optimize(..., "
                                "cancel=token) and call token.cancel() from any thread.")
      .def(nb::init<>())
      .def("cancel", &CancellationToken::Cancel)
      .def_prop_ro("cancelled", &CancellationToken::cancelled);
}

}  // namespace collage::python
