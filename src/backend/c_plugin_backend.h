// Backends declared by plug-ins through the C interface (collage/plugin_c_api.h): each table
// a plug-in hands over becomes a Backend whose rules parse the table's pattern texts and call
// its accept and compile functions, and whose kernels call its run function.
#pragma once

#include <memory>
#include <string>

#include "collage/plugin_c_api.h"
#include "collage/sdk/backend.h"
#include "collage/status.h"

namespace collage {

// The functions collage hands every C plug-in (one table for the process).
const CollageHostApi& CPluginHostApi();

// A backend for one table of the plug-in at `path`. Refuses, naming the file and the field,
// a table of a C interface version this collage does not know, one smaller than that version's
// table, without a name or version, or with a rule without a name, a pattern that does not
// parse, or a compile function. Once the version and size are known good, the table's release
// function runs when the backend is destroyed, also when this refuses it.
StatusOr<std::unique_ptr<Backend>> MakeCPluginBackend(const CollageBackendTable& table,
                                                      const std::string& path);

}  // namespace collage
