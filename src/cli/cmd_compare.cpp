// kbench compare A.json B.json [--fail-above PCT] [--noise PCT] [--allow-devices]: B's cases
// against A's (report/compare_report.hpp). Prints markdown and writes nothing, so that CI can
// run it on any two results; --fail-above turns a regression into exit status 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "core/errors.hpp"
#include "report/compare_report.hpp"

namespace kbench {
namespace {

// A percentage: a finite number, 0 or more. CLI11's NonNegativeNumber takes "nan" and "inf".
CLI::Validator percentage() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::size_t used = 0;
        double v = -1;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size() || !std::isfinite(v) || v < 0)
          return "expected a percentage, a number 0 or more";
        return "";
      },
      "PCT >= 0");
}

}  // namespace

void add_compare_command(CLI::App& app) {
  struct Options {
    std::string a, b;
    double fail_above = -1;  // -1: not asked for
    double noise = kDefaultNoisePct;
    bool allow_devices = false;
  };
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "compare", "Each case of result B against result A: the ratio of medians and a verdict (faster, slower, "
                 "same within noise); --fail-above makes a regression exit 1");
  sub->add_option("a", o->a, "Result A, the reference (schema v1)")->required();
  sub->add_option("b", o->b, "Result B, judged against A (schema v1)")->required();
  sub->add_option("--fail-above", o->fail_above,
                  "Exit 1 when a case is slower (its interval above 1) by more than PCT percent")
      ->check(percentage());
  sub->add_option("--noise", o->noise, "The noise band in percent: a ratio within it is \"same\"")
      ->check(percentage());
  sub->add_flag("--allow-devices", o->allow_devices,
                "Compare results of different devices (refused otherwise: the hardware's difference would read as "
                "the kernels')");
  sub->callback([o] {
    const std::vector<ReportInput> inputs = {{o->a, read_result(o->a)}, {o->b, read_result(o->b)}};
    if (!o->allow_devices) require_same_device(inputs);
    const Comparison c = compare_results(inputs[0].result, inputs[1].result, o->noise);  // throws before printing
    std::cout << compare_markdown(inputs[0], inputs[1], c, o->noise) << std::flush;
    if (o->fail_above < 0) return;
    const auto worse = regressions(c, o->fail_above);
    if (worse.empty()) return;
    const CaseComparison& w = **std::max_element(worse.begin(), worse.end(), [](auto* x, auto* y) { return x->ratio < y->ratio; });
    char line[256];
    std::snprintf(line, sizeof line, "compare: %zu case(s) slower by more than %g%%; the worst, %s %s %s, by %.1f%%",
                  worse.size(), o->fail_above, w.a->op.c_str(), w.a->variant.c_str(), w.a->dtype.c_str(),
                  (w.ratio - 1) * 100);
    throw Failure(line);
  });
}

}  // namespace kbench
