// Each subcommand lives in its own cli/cmd_<name>.cpp and adds itself to the app here.
// A command's callback throws UsageError for bad input; main turns that into one line on
// stderr and exit status 2.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "record/result.hpp"

namespace kbench {

// The process's command line, as main received it (recorded in every result).
const std::vector<std::string>& process_argv();
void set_process_argv(int argc, char** argv);

// After `r` was written to `written`: throws Interrupted (exit 128 + the signal) when a signal
// cut the run short (meta.incomplete), naming the file; nothing otherwise.
void end_if_incomplete(const Result& r, const std::filesystem::path& written);

void add_list_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_verify_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_probe_command(CLI::App& app);
void add_grid_command(CLI::App& app);
void add_fit_command(CLI::App& app);
void add_spec_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_merge_command(CLI::App& app);

}  // namespace kbench
