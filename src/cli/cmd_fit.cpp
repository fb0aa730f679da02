// kbench fit A.json B.json: the row rule's thresholds fitted on each grid run and judged on the
// other (experiments/fit.hpp), written to <out>/fit/; the decision is printed.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "experiments/fit.hpp"
#include "report/grid_report.hpp"

namespace kbench {

void add_fit_command(CLI::App& app) {
  struct Options {
    std::string a, b;
    std::vector<std::string> held, set;
    std::string out = "results";
  };
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "fit", "Fit the row rule's thresholds on one grid run and judge them on another (and the reverse); adopt "
             "only what beats the current rule by more than the runs differ");
  sub->add_option("a", o->a, "Grid result A (schema v1)")->required();
  sub->add_option("b", o->b, "Grid result B: the same grid, run at another time")->required();
  sub->add_option("--out", o->out, "Results root; the file goes to <out>/fit/");
  sub->add_option("--hold", o->held,
                  "A threshold kept at its current value, e.g. warp_max_vecs (repeatable): for what evidence from "
                  "outside the grid has settled");
  sub->add_option("--set", o->set,
                  "A threshold held at another value, NAME=VALUE, e.g. warp_max_vecs=64 (repeatable): the fit searches "
                  "the rest from there and is judged against the current rule");
  sub->callback([o] {
    validate_held(o->held);  // before reading anything
    const auto set = parse_set_values(o->set);
    const Result r =
        fit_result(read_result(o->a), read_result(o->b), o->a, o->b, process_argv(), o->held, set);  // throws first
    const auto path = write_result(r, std::filesystem::path(o->out) / r.experiment);
    std::printf("%s", fit_markdown(r.extra.at("fit")).c_str());
    spdlog::info("wrote {}", path.string());
  });
}

}  // namespace kbench
