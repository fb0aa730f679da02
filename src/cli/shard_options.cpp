#include "cli/shard_options.hpp"

#include "cli/workers.hpp"
#include "core/errors.hpp"

namespace kbench {

std::shared_ptr<ShardOptions> add_shard_options(CLI::App* sub) {
  auto o = std::make_shared<ShardOptions>();
  sub->add_option("--shard", o->shard,
                  "Run shard I/N of the plan only: its cases shuffled by the seed and split N ways (0 <= I < N); "
                  "kbench merge joins the N results");
  sub->add_option("--devices", o->devices,
                  "Run the plan on these GPUs (0,1,...): one worker process per GPU, each a shard, merged into one result");
  return o;
}

ShardRequest resolve_shard_options(const ShardOptions& o, const CLI::App& sub) {
  ShardRequest r;
  const bool devices_given = sub.count("--devices") > 0;
  if (sub.count("--shard") > 0) r.shard = parse_shard(o.shard);
  if (devices_given) r.devices = parse_devices(o.devices);
  if (devices_given && r.shard)
    throw UsageError("--devices runs every shard of the plan itself: give --shard or --devices, not both");
  if (devices_given && sub.count("--device") > 0)
    throw UsageError("--devices names the GPUs to run on: give --device or --devices, not both");
  return r;
}

std::string shard_summary(const Experiment& part) {
  const nlohmann::json& s = part.meta.at("shard");
  std::string text = "shard " + std::to_string(s.at("index").get<int>()) + "/" + std::to_string(s.at("count").get<int>()) +
                     " of plan " + s.at("plan_sha256").get<std::string>().substr(0, 12) + " (" +
                     std::to_string(s.at("plan_cases").get<std::size_t>()) + " cases): ";
  const auto& cases = s.at("cases");
  if (cases.empty()) return text + "no cases; it runs and writes a result without records";
  text += std::to_string(cases.size()) + " case(s), at plan positions ";
  for (std::size_t i = 0; i < cases.size() && i < 20; ++i) text += (i ? ", " : "") + std::to_string(cases[i].get<std::size_t>());
  if (cases.size() > 20) text += ", ...";
  return text;
}

}  // namespace kbench
