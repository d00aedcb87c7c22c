// A library that exports the plug-in entry names as data, not functions (calling them would
// jump into data), and runs code when loaded: collage must refuse it from its symbol table,
// before any of its code runs.
#include <cstdlib>

extern "C" {
__attribute__((visibility("default"))) int collage_plugin_abi_version = 1;
__attribute__((visibility("default"))) char collage_plugin_register[16] = {};
}

namespace {
__attribute__((constructor)) void MarkLoaded() { setenv("COLLAGE_DATA_ENTRY_PLUGIN_RAN", "1", 1); }
}  // namespace
