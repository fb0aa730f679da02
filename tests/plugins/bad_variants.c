/* A test plugin each of whose variants kbench must refuse, each with its own line, while
 * loading the rest (tests/cpu/test_plugins.cpp): an op kbench lacks, a dtype code it does not
 * know, a name that is not one, no launcher, no dtypes. None is ever launched. */
#include "kbench_plugin.h"

static int never_launched(const kbench_plugin_args* args, cudaStream_t stream) {
  (void)args;
  (void)stream;
  return 1;
}

static const int32_t float32_only[] = {KBENCH_PLUGIN_FLOAT32};
static const int32_t unknown_dtype[] = {KBENCH_PLUGIN_FLOAT32, 9};

static const kbench_plugin_variant variants[] = {
    {"matmul_4d", "unknown_op", "an op kbench does not have", float32_only, 1, 0, 0, never_launched},
    {"row_sum", "unknown_dtype", "a dtype code kbench does not know", unknown_dtype, 2, 0, 0, never_launched},
    {"row_sum", "not a name", "a name with spaces", float32_only, 1, 0, 0, never_launched},
    {"row_sum", "no_launcher", "no launch function", float32_only, 1, 0, 0, 0},
    {"row_sum", "no_dtypes", "an empty dtype list", float32_only, 0, 0, 0, never_launched},
};

static const kbench_plugin plugin = {KBENCH_PLUGIN_ABI_VERSION, "bad_variants", variants, 5};

const kbench_plugin* kbench_plugin_entry(void) { return &plugin; }
