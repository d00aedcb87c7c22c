/* collage's C interface for plug-in backends, version 1.
 *
 * A plug-in written against this header is a shared library, in C or any language that
 * can export a C function, built by any compiler: it shares no C++ type, allocator or
 * standard library with collage, only the plain structs and function pointers below. It
 * exports one function, collage_c_plugin_v1 (define it with COLLAGE_C_PLUGIN), that hands
 * collage a table per backend: a name, a version, and rules. Each rule is a pattern in
 * collage's pattern text (what `collage backends -v` prints, e.g. "Relu(any)",
 * "Clip(any, const?, const?)", "Relu|Sigmoid(Add(any, const))"), a test that accepts or
 * declines a match, and a compile function that builds a kernel for one matched group.
 * collage matches, measures, places and runs the groups; it calls `run` on row-major
 * buffers. backends/plugin_example/ is a complete plug-in in C.
 *
 * Versioning: the entry point's name carries the major version (a later, incompatible one
 * would be collage_c_plugin_v2); every table starts with the version and size it was built
 * with, so that later minor versions only append fields and old plug-ins keep loading.
 * collage refuses a table whose version it does not know or whose size is too small,
 * naming the file. The C++ SDK (collage/sdk/backend.h, COLLAGE_PLUGIN) stays available for
 * plug-ins built by the same compiler as collage; it has a version of its own.
 *
 * Lifetimes: every pointer collage passes is valid only during the call it is passed to
 * (copy what a kernel keeps, such as constant weights or attribute values). The strings and
 * rule arrays of a backend table must stay valid until the table's `release` is called. */
#ifndef COLLAGE_PLUGIN_C_API_H_
#define COLLAGE_PLUGIN_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COLLAGE_C_API_VERSION 1

/* Element types, numbered as ONNX's TensorProto.DataType. */
typedef enum CollageDType {
  COLLAGE_DTYPE_UNDEFINED = 0,
  COLLAGE_DTYPE_FLOAT32 = 1,
  COLLAGE_DTYPE_UINT8 = 2,
  COLLAGE_DTYPE_INT8 = 3,
  COLLAGE_DTYPE_UINT16 = 4,
  COLLAGE_DTYPE_INT16 = 5,
  COLLAGE_DTYPE_INT32 = 6,
  COLLAGE_DTYPE_INT64 = 7,
  COLLAGE_DTYPE_BOOL = 9,
  COLLAGE_DTYPE_FLOAT16 = 10,
  COLLAGE_DTYPE_FLOAT64 = 11,
  COLLAGE_DTYPE_UINT32 = 12,
  COLLAGE_DTYPE_UINT64 = 13,
  COLLAGE_DTYPE_BFLOAT16 = 16
} CollageDType;

/* One tensor a group reads or writes, as its kernel will see it. */
typedef struct CollageTensorInfo {
  int32_t dtype;              /* a CollageDType */
  int32_t rank;
  const int64_t* dims;        /* `rank` dimensions, all known */
  const void* constant_data;  /* a constant's elements (row-major), NULL for a computed value */
  int32_t kernel_input;       /* its index among run()'s inputs; -1 for a constant (not passed)
                                 and for an output */
} CollageTensorInfo;

/* A match of one rule's pattern: opaque, read through CollageHostApi. */
typedef struct CollageGroup CollageGroup;

/* The functions collage gives a plug-in to read a group. Ops are the pattern's op nodes in
 * pre-order (0 is the root); captures are its `any` and `const` leaves in pre-order. The
 * functions returning int return 1 when they wrote the value and 0 when there is none (an
 * index out of range, an absent optional input, an attribute missing or of another type). */
typedef struct CollageHostApi {
  uint32_t version; /* COLLAGE_C_API_VERSION of the collage calling */
  uint32_t size;    /* sizeof(CollageHostApi) in that collage */
  int32_t (*op_count)(const CollageGroup* group);
  const char* (*op_type)(const CollageGroup* group, int32_t op);
  const char* (*op_domain)(const CollageGroup* group, int32_t op); /* "" for ONNX's */
  int (*attribute_int)(const CollageGroup* group, int32_t op, const char* name, int64_t* value);
  int (*attribute_float)(const CollageGroup* group, int32_t op, const char* name, float* value);
  int (*attribute_string)(const CollageGroup* group, int32_t op, const char* name,
                          const char** value);
  int (*attribute_ints)(const CollageGroup* group, int32_t op, const char* name,
                        const int64_t** values, int32_t* count);
  int (*attribute_floats)(const CollageGroup* group, int32_t op, const char* name,
                          const float** values, int32_t* count);
  int32_t (*capture_count)(const CollageGroup* group);
  int (*capture)(const CollageGroup* group, int32_t index, CollageTensorInfo* info);
  /* The kernel's inputs (computed values the group reads, in run()'s order) and outputs. */
  int32_t (*input_count)(const CollageGroup* group);
  int (*input)(const CollageGroup* group, int32_t index, CollageTensorInfo* info);
  int32_t (*output_count)(const CollageGroup* group);
  int (*output)(const CollageGroup* group, int32_t index, CollageTensorInfo* info);
  /* The threads a kernel may use (the session's setting). */
  int32_t (*num_threads)(const CollageGroup* group);
} CollageHostApi;

/* A compiled group. `run` gets one buffer per kernel input and output, row-major, and
 * returns 0, or nonzero after writing a message of at most `error_size` bytes (NUL
 * included) to `error`. It may be called from several threads at once with different
 * buffers. `release` (may be NULL) frees `state` when collage drops the kernel. */
typedef struct CollageKernel {
  void* state;
  int (*run)(void* state, const void* const* inputs, void* const* outputs, char* error,
             size_t error_size);
  void (*release)(void* state);
} CollageKernel;

/* One rule. `accepts` (may be NULL: every match) returns nonzero when the backend runs the
 * match; `compile` fills `kernel` and returns 0, or returns nonzero after writing why to
 * `error`. Both get the backend table's `state`. */
typedef struct CollageRule {
  const char* name;
  const char* pattern;
  int (*accepts)(void* backend_state, const CollageHostApi* host, const CollageGroup* group);
  int (*compile)(void* backend_state, const CollageHostApi* host, const CollageGroup* group,
                 CollageKernel* kernel, char* error, size_t error_size);
} CollageRule;

/* One backend. `version_string` names the library and the code it dispatches to; it is part
 * of every cost key, so that a new version is measured anew. `release` (may be NULL) is
 * called once, when collage no longer uses the backend. */
typedef struct CollageBackendTable {
  uint32_t version; /* COLLAGE_C_API_VERSION the plug-in was built against */
  uint32_t size;    /* sizeof(CollageBackendTable) */
  const char* name;
  const char* version_string;
  const CollageRule* rules;
  int32_t rule_count;
  void* state;
  void (*release)(void* state);
} CollageBackendTable;

/* The entry point: sets `*backends` to an array of `*count` tables (valid until each is
 * released) and returns 0, or returns nonzero after writing why to `error`. */
typedef int (*CollageCPluginEntry)(const CollageHostApi* host, const CollageBackendTable** backends,
                                   int32_t* count, char* error, size_t error_size);

#define COLLAGE_C_PLUGIN_ENTRY_NAME "collage_c_plugin_v1"

#ifdef __cplusplus
#define COLLAGE_C_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define COLLAGE_C_EXPORT __attribute__((visibility("default")))
#endif

/* Defines the exported entry point: COLLAGE_C_PLUGIN(my_entry), where my_entry has the type
 * CollageCPluginEntry. */
#define COLLAGE_C_PLUGIN(entry)                                                               \
  COLLAGE_C_EXPORT int collage_c_plugin_v1(                                                   \
      const CollageHostApi* host, const CollageBackendTable** backends, int32_t* count,       \
      char* error, size_t error_size) {                                                       \
    return entry(host, backends, count, error, error_size);                                   \
  }

#ifdef __cplusplus
}
#endif

#endif /* COLLAGE_PLUGIN_C_API_H_ */
