#include "status_error.h"

#include <nanobind/stl/string.h>

#include "bindings.h"

namespace nb = nanobind;

namespace collage::python {

void BindErrors(nb::module_& m) {
  (void)m;
  nb::register_exception_translator([](const std::exception_ptr& error, void*) {
    try {
      std::rethrow_exception(error);
    } catch (const StatusError& e) {
      // The classes live in Python (readable, documented, catchable by their Python bases);
      // collage._errors is imported before this module, so the import is a lookup.
      try {
        nb::object exception = nb::module_::import_("collage._errors")
                                   .attr("error_from_status")(StatusCodeName(e.status().code()),
                                                              e.status().message());
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
      } catch (nb::python_error& lookup_failed) {
        lookup_failed.restore();
      }
    }
  });
}

}  // namespace collage::python
