/* The example plug-in backend "plugin_example", written in C against collage's C plug-in
 * interface (collage/plugin_c_api.h): clamp-type activations (Relu, LeakyRelu, and Clip with
 * constant bounds) on float32 tensors of any shape, in one pass over contiguous memory. Small
 * on purpose: it shows the whole contract a vendor needs, and any C compiler builds it. */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "collage/plugin_c_api.h"

enum Activation { kRelu, kLeakyRelu, kClip };

typedef struct ActivationKernel {
  enum Activation activation;
  int64_t elements;
  float alpha, lo, hi;
} ActivationKernel;

static int RunActivation(void* state, const void* const* inputs, void* const* outputs,
                         char* error, size_t error_size) {
  const ActivationKernel* k = (const ActivationKernel*)state;
  const float* x = (const float*)inputs[0];
  float* y = (float*)outputs[0];
  (void)error;
  (void)error_size;
  switch (k->activation) {
    case kRelu:
      for (int64_t i = 0; i < k->elements; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      break;
    case kLeakyRelu:
      for (int64_t i = 0; i < k->elements; ++i) y[i] = x[i] >= 0.0f ? x[i] : k->alpha * x[i];
      break;
    case kClip:
      /* ONNX Clip propagates NaN (x != x holds for NaN alone). */
      for (int64_t i = 0; i < k->elements; ++i) {
        const float v = x[i] < k->lo ? k->lo : x[i];
        y[i] = x[i] != x[i] ? x[i] : (v > k->hi ? k->hi : v);
      }
      break;
  }
  return 0;
}

static int IsFloat32Input(const CollageHostApi* host, const CollageGroup* group) {
  CollageTensorInfo info;
  return host->capture(group, 0, &info) && info.dtype == COLLAGE_DTYPE_FLOAT32;
}

/* One bound of Clip: the constant input `capture` where the node has it (opset 11 on), else
 * the attribute `name` (opsets 6 to 10), else `otherwise`. 0 when the input is there but is
 * not one float32. */
static int ReadBound(const CollageHostApi* host, const CollageGroup* group, int32_t capture,
                     const char* name, float otherwise, float* bound) {
  CollageTensorInfo info;
  if (host->capture(group, capture, &info)) {
    int64_t elements = 1;
    for (int32_t d = 0; d < info.rank; ++d) elements *= info.dims[d];
    if (info.dtype != COLLAGE_DTYPE_FLOAT32 || elements != 1 || info.constant_data == NULL) return 0;
    *bound = *(const float*)info.constant_data;
    return 1;
  }
  if (!host->attribute_float(group, 0, name, bound)) *bound = otherwise;
  return 1;
}

static int ClipBounds(const CollageHostApi* host, const CollageGroup* group, float* lo, float* hi) {
  return ReadBound(host, group, 1, "min", -FLT_MAX, lo) && ReadBound(host, group, 2, "max", FLT_MAX, hi);
}

static int AcceptsActivation(void* backend_state, const CollageHostApi* host,
                             const CollageGroup* group) {
  (void)backend_state;
  return IsFloat32Input(host, group);
}

static int AcceptsClip(void* backend_state, const CollageHostApi* host, const CollageGroup* group) {
  float lo, hi;
  (void)backend_state;
  return IsFloat32Input(host, group) && ClipBounds(host, group, &lo, &hi);
}

static int Compile(const CollageHostApi* host, const CollageGroup* group, ActivationKernel spec,
                   CollageKernel* kernel, char* error, size_t error_size) {
  CollageTensorInfo out;
  if (!host->output(group, 0, &out)) {
    snprintf(error, error_size, "the group has no output");
    return 1;
  }
  spec.elements = 1;
  for (int32_t d = 0; d < out.rank; ++d) spec.elements *= out.dims[d];
  ActivationKernel* state = (ActivationKernel*)malloc(sizeof(ActivationKernel));
  if (state == NULL) {
    snprintf(error, error_size, "out of memory");
    return 1;
  }
  *state = spec;
  kernel->state = state;
  kernel->run = RunActivation;
  kernel->release = free;
  return 0;
}

static int CompileRelu(void* backend_state, const CollageHostApi* host, const CollageGroup* group,
                       CollageKernel* kernel, char* error, size_t error_size) {
  ActivationKernel spec = {kRelu, 0, 0.0f, 0.0f, 0.0f};
  (void)backend_state;
  return Compile(host, group, spec, kernel, error, error_size);
}

static int CompileLeakyRelu(void* backend_state, const CollageHostApi* host,
                            const CollageGroup* group, CollageKernel* kernel, char* error,
                            size_t error_size) {
  ActivationKernel spec = {kLeakyRelu, 0, 0.01f, 0.0f, 0.0f};
  (void)backend_state;
  host->attribute_float(group, 0, "alpha", &spec.alpha);
  return Compile(host, group, spec, kernel, error, error_size);
}

static int CompileClip(void* backend_state, const CollageHostApi* host, const CollageGroup* group,
                       CollageKernel* kernel, char* error, size_t error_size) {
  ActivationKernel spec = {kClip, 0, 0.0f, 0.0f, 0.0f};
  (void)backend_state;
  if (!ClipBounds(host, group, &spec.lo, &spec.hi)) {
    snprintf(error, error_size, "Clip's bounds are not float32 constants");
    return 1;
  }
  return Compile(host, group, spec, kernel, error, error_size);
}

static const CollageRule kRules[] = {
    {"relu", "Relu(any)", AcceptsActivation, CompileRelu},
    {"leaky_relu", "LeakyRelu(any)", AcceptsActivation, CompileLeakyRelu},
    {"clip", "Clip(any, const?, const?)", AcceptsClip, CompileClip},
};

static const CollageBackendTable kBackend = {
    COLLAGE_C_API_VERSION,
    sizeof(CollageBackendTable),
    "plugin_example",
    "plugin_example 1.0 scalar",
    kRules,
    (int32_t)(sizeof(kRules) / sizeof(kRules[0])),
    NULL,
    NULL,
};

static int Start(const CollageHostApi* host, const CollageBackendTable** backends, int32_t* count,
                 char* error, size_t error_size) {
  if (host->version < 1) {
    snprintf(error, error_size, "needs collage's C plug-in interface version 1 or later");
    return 1;
  }
  *backends = &kBackend;
  *count = 1;
  return 0;
}

COLLAGE_C_PLUGIN(Start)
