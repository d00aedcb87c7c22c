// collage._collage.backends: what `collage backends` lists, for Python: every registered
// backend with its version, and each one this build left out or that did not load here, with
// the reason.
#include <nanobind/stl/string.h>

#include "collage/available_backends.h"
#include "bindings.h"
#include "collage/sdk/backend.h"

namespace nb = nanobind;

namespace collage::python {

void BindBackends(nb::module_& m) {
  m.def("backends", [] {
    nb::list listed;
    for (const Backend* backend : GlobalBackendRegistry().backends()) {
      nb::dict d;
      d["name"] = backend->name();
      d["built"] = true;
      d["available"] = true;
      d["version"] = backend->version();
      d["device"] = backend->device();
      d["rules"] = backend->rules().size();
      d["graph_level"] = backend->graph_level();
      d["reason"] = "";
      listed.append(d);
    }
    for (const SkippedBackend& skipped : SkippedBuiltinBackends()) {
      nb::dict d;
      d["name"] = skipped.name;
      d["built"] = skipped.built;
      d["available"] = false;
      d["version"] = "";
      d["device"] = "";
      d["rules"] = 0;
      d["graph_level"] = false;
      d["reason"] = skipped.reason;
      listed.append(d);
    }
    return listed;
  });
}

}  // namespace collage::python
