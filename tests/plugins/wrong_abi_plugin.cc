// A plug-in that claims a backend ABI version this collage does not have: loading it must be
// refused before its registration function runs.
#include "collage/sdk/backend.h"

extern "C" __attribute__((visibility("default"))) int collage_plugin_abi_version() {
  return collage::kBackendAbiVersion + 1000;
}
extern "C" __attribute__((visibility("default"))) void collage_plugin_register(
    collage::BackendRegistry*, collage::Status* status) {
  *status = collage::Status(collage::StatusCode::kInternal, "must never be called");
}
