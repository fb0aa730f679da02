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
  sub->add_flag("--isolate", o->isolate,
                "Time in a worker process on --device: a variant that faults (an illegal address, a kernel past "
                "--unit-timeout) is recorded as failed and the run goes on without it");
  sub->add_option("--unit-timeout", o->unit_timeout,
                  "With --isolate or --devices: seconds a worker may spend on one step (one variant's check or "
                  "visit, one case's preparation) before it is killed and the variant recorded as failed (default " +
                      std::to_string(static_cast<int>(kDefaultStepTimeoutS)) + ")");
  return o;
}

ShardRequest resolve_shard_options(const ShardOptions& o, const CLI::App& sub, int device) {
  ShardRequest r;
  const bool devices_given = sub.count("--devices") > 0;
  if (sub.count("--shard") > 0) r.shard = parse_shard(o.shard);
  if (devices_given) r.devices = parse_devices(o.devices);
  if (devices_given && r.shard)
    throw UsageError("--devices runs every shard of the plan itself: give --shard or --devices, not both");
  if (devices_given && sub.count("--device") > 0)
    throw UsageError("--devices names the GPUs to run on: give --device or --devices, not both");
  if (o.isolate && devices_given)
    throw UsageError("--devices runs every shard in a worker process already: give --isolate or --devices, not both");
  if (o.isolate && r.shard)
    throw UsageError("--isolate runs the whole plan in one worker: give --isolate or --shard, not both");
  if (sub.count("--unit-timeout") > 0) {
    r.step_timeout_s = parse_step_timeout(o.unit_timeout);
    if (!o.isolate && !devices_given)
      throw UsageError("--unit-timeout is the deadline of worker processes: give it with --isolate or --devices");
  }
  if (o.isolate) r.devices = {device};
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
