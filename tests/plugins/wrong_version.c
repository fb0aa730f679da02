/* A test plugin built for another ABI version (the next one): kbench must refuse it from its
 * first field alone, naming both versions (tests/cpu/test_plugins.cpp). Pure C, which also
 * shows that kbench_plugin.h compiles as C. Its table is otherwise well formed, so that the
 * version is the only reason to refuse it. */
#include "kbench_plugin.h"

static int never_launched(const kbench_plugin_args* args, cudaStream_t stream) {
  (void)args;
  (void)stream;
  return 1;
}

static const int32_t dtypes[] = {KBENCH_PLUGIN_FLOAT32};

static const kbench_plugin_variant variants[] = {
    {"row_sum", "next_version", "never loaded", dtypes, 1, 0, 0, never_launched},
};

static const kbench_plugin plugin = {KBENCH_PLUGIN_ABI_VERSION + 1u, "wrong_version", variants, 1};

const kbench_plugin* kbench_plugin_entry(void) { return &plugin; }
