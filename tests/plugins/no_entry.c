/* A test plugin that exports no kbench_plugin_entry (the name is misspelt, as a typo or a C++
 * build without extern "C" would leave it): kbench must refuse it with one line
 * (tests/cpu/test_plugins.cpp). */
#include "kbench_plugin.h"

KBENCH_PLUGIN_EXPORT const kbench_plugin* kbench_plugin_entri(void);

const kbench_plugin* kbench_plugin_entri(void) { return 0; }
