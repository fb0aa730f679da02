/* A test plugin whose launcher returns an error on every case it claims (every row_sum case in
 * float32): kbench must fail its check with the plugin's code and message, never time it, and
 * go on with the other variants (tests/gpu/test_plugins.cpp). Pure C: it launches nothing. */
#include <stdio.h>

#include "kbench_plugin.h"

static int always_fails(const kbench_plugin_args* args, cudaStream_t stream) {
  (void)stream;
  snprintf(args->error, args->error_size, "this test plugin refuses every launch (%lld rows)",
           (long long)args->inputs[0].rows);
  return 7;
}

static const int32_t dtypes[] = {KBENCH_PLUGIN_FLOAT32};

static const kbench_plugin_variant variants[] = {
    {"row_sum", "erroring", "returns error 7 from every launch", dtypes, 1, 0, 0, always_fails},
};

static const kbench_plugin plugin = {KBENCH_PLUGIN_ABI_VERSION, "erroring", variants, 1};

const kbench_plugin* kbench_plugin_entry(void) { return &plugin; }
