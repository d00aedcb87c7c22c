/* A plug-in written against the C interface that breaks its contract in one way, chosen by
 * COLLAGE_C_FAULT: the loader must refuse it, or the run report it, naming the plug-in. Its
 * one rule takes Relu. */
#include <stdio.h>
#include <string.h>

#include "collage/plugin_c_api.h"

#define FAULT_NEWER_VERSION 1
#define FAULT_BAD_PATTERN 2
#define FAULT_START_FAILS 3
#define FAULT_NO_COMPILE 4
#define FAULT_COMPILE_FAILS 5
#define FAULT_RUN_FAILS 6

static int RunFails(void* state, const void* const* inputs, void* const* outputs, char* error,
                    size_t error_size) {
  (void)state;
  (void)inputs;
  (void)outputs;
  /* Fills the whole buffer without a terminating NUL: collage must cut it, not read past. */
  memset(error, 'x', error_size);
  memcpy(error, "the device is gone", 18);
  return 1;
}

static int Compile(void* backend_state, const CollageHostApi* host, const CollageGroup* group,
                   CollageKernel* kernel, char* error, size_t error_size) {
  (void)backend_state;
  (void)host;
  (void)group;
  if (COLLAGE_C_FAULT == FAULT_COMPILE_FAILS) {
    snprintf(error, error_size, "no kernel for this shape");
    return 1;
  }
  kernel->state = NULL;
  kernel->run = RunFails;
  kernel->release = NULL;
  return 0;
}

static const CollageRule kRules[] = {
    {"relu", COLLAGE_C_FAULT == FAULT_BAD_PATTERN ? "Relu(any" : "Relu(any)", NULL,
     COLLAGE_C_FAULT == FAULT_NO_COMPILE ? NULL : Compile},
};

static const CollageBackendTable kBackend = {
    COLLAGE_C_FAULT == FAULT_NEWER_VERSION ? COLLAGE_C_API_VERSION + 1 : COLLAGE_C_API_VERSION,
    sizeof(CollageBackendTable),
    "broken_c",
    "broken_c 1.0",
    kRules,
    1,
    NULL,
    NULL,
};

static int Start(const CollageHostApi* host, const CollageBackendTable** backends, int32_t* count,
                 char* error, size_t error_size) {
  (void)host;
  if (COLLAGE_C_FAULT == FAULT_START_FAILS) {
    snprintf(error, error_size, "no accelerator found");
    return 1;
  }
  *backends = &kBackend;
  *count = 1;
  return 0;
}

COLLAGE_C_PLUGIN(Start)
