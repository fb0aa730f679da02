// kbench list [--format md|csv|json]: ops, their variants, the experiments and the method's
// constants (cli/listing.hpp).
#include <cstdio>
#include <memory>
#include <vector>

#include "cli/commands.hpp"
#include "cli/listing.hpp"

namespace kbench {

namespace {
std::vector<std::string> g_argv;
}

const std::vector<std::string>& process_argv() { return g_argv; }
void set_process_argv(int argc, char** argv) { g_argv.assign(argv, argv + argc); }

void add_list_command(CLI::App& app) {
  auto* sub = app.add_subcommand("list", "List ops, variants (with their dtypes), experiments and the method's constants");
  auto format = std::make_shared<std::string>("md");
  sub->add_option("--format", *format,
                  "md: a table of variants per op (default); csv: a row per variant; json: everything, "
                  "the method's constants included (src/record/list.schema.json)")
      ->check(CLI::IsMember({"md", "csv", "json"}));
  sub->callback([format] {
    const nlohmann::json listing = listing_json();
    const std::string text = *format == "json" ? listing.dump(2) + "\n"
                             : *format == "csv" ? listing_csv(listing)
                                                : listing_markdown(listing);
    std::fputs(text.c_str(), stdout);
  });
}

}  // namespace kbench
