/* kbench plugin ABI, version 1: variants of kbench's ops compiled outside kbench.
 *
 * A plugin is a shared library (built by you, with your compiler and flags) that exports one
 * function, kbench_plugin_entry, returning a table of variants. `kbench run --plugin lib.so` and
 * `kbench check --plugin lib.so` open it with dlopen, and each variant becomes an ordinary
 * variant of its op, named "plugin.<name>": checked against the op's FP64 oracle before timing,
 * timed in the same visits as kbench's own variants and baselines, and recorded like them, with
 * the library's path and SHA-256 in the result's meta.plugins. docs/plugins.md tells the whole
 * story; docs/examples/plugin/ is a worked example.
 *
 * Pure C (C99 and C++ both compile it): only fixed-width integers, double, char pointers, plain
 * structs and function pointers cross the boundary, so a plugin built by another compiler, or
 * in C, works. Nothing here allocates or frees memory across it: kbench owns every buffer it
 * passes, the plugin owns its table (which must stay valid until the process ends: kbench
 * never unloads a plugin).
 *
 * Versioning rule: the entry point's name and signature and the first field of kbench_plugin
 * (abi_version) never change. Any other change to this file (a field added, moved or removed,
 * a meaning or a calling rule changed) increments KBENCH_PLUGIN_ABI_VERSION, and kbench loads
 * only plugins built against the version it was built with: another version is refused by
 * reading abi_version alone, with a line naming both, before anything else of the table is read.
 */
#ifndef KBENCH_PLUGIN_H
#define KBENCH_PLUGIN_H

#include <cuda_runtime_api.h> /* cudaStream_t */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KBENCH_PLUGIN_ABI_VERSION 1u
#define KBENCH_PLUGIN_ENTRY_SYMBOL "kbench_plugin_entry"

/* Element types, as kbench names them (float32, float16, bfloat16). */
#define KBENCH_PLUGIN_FLOAT32 1
#define KBENCH_PLUGIN_FLOAT16 2
#define KBENCH_PLUGIN_BFLOAT16 3

/* The most dimensions a case has: [n] (elementwise), [rows, cols] (row ops), [M, N, K] (GEMM). */
#define KBENCH_PLUGIN_MAX_RANK 4

/* An op parameter beyond dtype and shape (rmsnorm's eps, a backward's flags): `kbench list`
 * names each op's parameters. */
typedef struct kbench_plugin_param {
  const char* name;
  double value;
} kbench_plugin_param;

/* What is computed: the op at a dtype and shape, with every parameter the op takes. */
typedef struct kbench_plugin_case {
  const char* op;     /* "add", "row_sum", ... */
  int32_t dtype;      /* KBENCH_PLUGIN_FLOAT32, ... */
  int32_t rank;       /* how many entries of shape are used */
  int64_t shape[KBENCH_PLUGIN_MAX_RANK];
  const kbench_plugin_param* params;
  int32_t param_count;
} kbench_plugin_case;

/* A tensor on the device: a row-major [rows, cols] view (a 1-D tensor is one row) whose row r
 * starts row_stride elements after row r - 1. Inputs may have row_stride > cols (kbench checks
 * strided rows); the padding between rows must not be read. Names and order are the op's
 * (kbench list, or the op's *_op.cpp under kernels/). */
typedef struct kbench_plugin_tensor {
  const char* name;
  void* data; /* device memory; inputs must not be written */
  int32_t dtype;
  int64_t rows;
  int64_t cols;
  int64_t row_stride;
} kbench_plugin_tensor;

typedef struct kbench_plugin_args {
  const kbench_plugin_case* problem;
  const kbench_plugin_tensor* inputs;
  int32_t input_count;
  const kbench_plugin_tensor* outputs;
  int32_t output_count;
  /* workspace_bytes(problem) bytes of device scratch (NULL when 0), zeroed once when allocated
   * and reused by every launch: a launch that relies on zeros must leave them zero. */
  void* workspace;
  size_t workspace_bytes;
  /* Where a failing launch writes one line saying why (NUL-terminated, at most error_size
   * bytes including the NUL); kbench shows it with the code the launch returns. */
  char* error;
  size_t error_size;
} kbench_plugin_args;

typedef struct kbench_plugin_variant {
  const char* op;      /* an op kbench has: "add", "row_sum", "softmax", ... (kbench list) */
  const char* name;    /* letters, digits, '_' and '-', at most 48; recorded as "plugin.<name>" */
  const char* summary; /* one line for logs (may be NULL) */
  const int32_t* dtypes; /* the dtypes it computes (KBENCH_PLUGIN_FLOAT32, ...) */
  int32_t dtype_count;
  /* Whether it can run a case of one of its dtypes: nonzero when it can; 0 when it cannot, with
   * the reason written to `why` (NUL-terminated, at most why_size bytes). Asked while planning,
   * before any GPU work: it must not touch the GPU. NULL: every shape the op takes. A case it
   * claims is checked against the oracle like any other: claiming one it cannot compute fails
   * that case's check, and the variant is not timed there. */
  int (*supports)(const kbench_plugin_case* problem, char* why, size_t why_size);
  /* Device scratch a launch needs, in bytes; NULL: none. */
  size_t (*workspace_bytes)(const kbench_plugin_case* problem);
  /* Enqueues the computation on `stream` and returns at once: 0 on success, any other value an
   * error, with a line in args->error. It must only enqueue work on `stream` (kbench captures
   * it into CUDA graphs and times it with events): no synchronisation, no allocation, no other
   * stream, no C++ exception out of it. It must check its own launches (cudaGetLastError in the
   * plugin's CUDA runtime, which kbench's cannot see) and report them as an error. */
  int (*launch)(const kbench_plugin_args* args, cudaStream_t stream);
} kbench_plugin_variant;

typedef struct kbench_plugin {
  uint32_t abi_version; /* KBENCH_PLUGIN_ABI_VERSION: the first field in every version */
  const char* name;     /* the plugin, for logs and the record: letters, digits, '_', '-' */
  const kbench_plugin_variant* variants;
  int32_t variant_count;
} kbench_plugin;

/* The one symbol kbench looks up. It must not touch the GPU, and returns the same table on
 * every call. */
typedef const kbench_plugin* (*kbench_plugin_entry_fn)(void);

#if defined(_WIN32)
#define KBENCH_PLUGIN_EXPORT __declspec(dllexport)
#else
#define KBENCH_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

KBENCH_PLUGIN_EXPORT const kbench_plugin* kbench_plugin_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_PLUGIN_H */
