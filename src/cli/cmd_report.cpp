// kbench report FILE... [--format md|csv|json] [--out FILE] [--cache cold|warm|all] [--timer events|graph|all]
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "report/csv.hpp"
#include "report/report.hpp"

namespace kbench {
namespace {

struct ReportOptions {
  std::vector<std::string> files;
  std::string out;
  std::string format = "md";
  ReportFilter filter;
};

void run_report(const ReportOptions& options) {
  // The report must never replace a result it was built from.
  if (!options.out.empty())
    for (const auto& file : options.files)
      if (std::error_code ec; std::filesystem::equivalent(options.out, file, ec))  // false where either is missing
        throw UsageError("--out " + options.out + " is one of the result files read; name another file");
  std::vector<ReportInput> inputs;
  for (const auto& file : options.files) inputs.push_back({file, read_result(file)});
  const std::string text = options.format == "csv"    ? records_csv(inputs, options.filter)
                           : options.format == "json" ? records_json(inputs, options.filter).dump(2) + "\n"
                                                      : build_report(inputs, options.filter);
  if (options.out.empty()) {
    std::cout << text;
  } else {
    write_file_atomically(options.out, text, Overwrite::replace);
  }
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  auto* sub = app.add_subcommand(
      "report", "Markdown tables setting result files of one device side by side (kbench and "
                "PyTorch runs), with speed-ups over each baseline");
  sub->add_option("files", options->files, "Result files (schema v1)")->required();
  sub->add_option("--out", options->out, "Write the report to this file instead of stdout");
  sub->add_option("--format", options->format,
                  "md: tables (default); csv: every record as a row; json: the same records as objects")
      ->check(CLI::IsMember({"md", "csv", "json"}));
  sub->add_option("--cache", options->filter.cache, "Show only this cache mode")
      ->check(CLI::IsMember({"cold", "warm", "all"}));
  sub->add_option("--timer", options->filter.timer, "Show only this timer")
      ->check(CLI::IsMember({"events", "graph", "cupti", "all"}));
  sub->callback([options] { run_report(*options); });
}

}  // namespace kbench
