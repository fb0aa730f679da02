#include "device/gpu_load.hpp"

#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/subprocess.hpp"
#include "core/text.hpp"

namespace kbench {
namespace {

using nlohmann::json;

// A hung driver can make nvidia-smi block for minutes; a snapshot is not worth that.
constexpr int kNvidiaSmiTimeoutSeconds = 10;

constexpr double kBusyUtilizationPct = 10.0;

struct ReasonBit {
  std::uint64_t bit;
  const char* name;
};
// nvidia-smi/NVML clock event reason bits (nvmlClocksEventReason*).
constexpr std::array<ReasonBit, 9> kReasonBits{{
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
}};
// Reasons that mean the clock was held below what the load asked for.
const std::set<std::string> kLimitingReasons{"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown",
                                             "hw_thermal_slowdown", "hw_power_brake_slowdown"};

std::vector<std::string> split_csv_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream ss(line);
  std::string field;
  while (std::getline(ss, field, ',')) fields.push_back(trim(field));
  return fields;
}

std::vector<std::string> non_empty_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line))
    if (!trim(line).empty()) lines.push_back(trim(line));
  return lines;
}

// "[N/A]", "[Not Supported]" and anything else that is not a number become null.
json number_or_null(const std::string& token, bool integral) {
  if (token.empty()) return nullptr;
  char* end = nullptr;
  const double value = std::strtod(token.c_str(), &end);
  if (end != token.c_str() + token.size()) return nullptr;
  if (integral) return static_cast<std::int64_t>(value);
  return value;
}

// Only the characters of a uuid, an index or a PCI bus id: anything else is not a GPU id.
bool is_safe_gpu_id(const std::string& id) {
  if (id.empty()) return false;
  for (unsigned char c : id)
    if (!std::isalnum(c) && c != '-' && c != ':' && c != '.') return false;
  return true;
}

json unavailable(const std::string& reason) { return {{"available", false}, {"reason", reason}}; }

bool is_available(const json& snapshot) {
  return snapshot.is_object() && snapshot.value("available", false);
}

}  // namespace

std::optional<std::string> run_nvidia_smi(const std::vector<std::string>& args, std::string* why) {
  std::vector<std::string> argv{"nvidia-smi"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions options;
  options.timeout_s = kNvidiaSmiTimeoutSeconds;
  const ProcessResult r = run_process(argv, options);
  if (r.ok()) return r.out;
  if (why) {
    if (!r.started)
      *why = "nvidia-smi not found";
    else if (r.timed_out)
      *why = "nvidia-smi timed out after " + std::to_string(kNvidiaSmiTimeoutSeconds) + " s";
    else
      *why = "nvidia-smi failed (exit status " + std::to_string(r.exit_code) + ")";
  }
  return std::nullopt;
}

json parse_gpu_query_line(const std::string& line) {
  const auto f = split_csv_fields(line);
  if (f.size() != 9)
    throw std::invalid_argument("expected 9 fields from nvidia-smi --query-gpu, got " +
                                std::to_string(f.size()) + ": '" + trim(line) + "'");
  return {
      {"utilization_pct", number_or_null(f[0], true)},
      {"memory_utilization_pct", number_or_null(f[1], true)},
      {"sm_clock_mhz", number_or_null(f[2], true)},
      {"mem_clock_mhz", number_or_null(f[3], true)},
      {"temperature_c", number_or_null(f[4], true)},
      {"power_w", number_or_null(f[5], false)},
      {"memory_used_mib", number_or_null(f[6], true)},
      {"clock_event_reasons", decode_clock_event_reasons(f[7])},
      {"uuid", f[8].rfind("GPU-", 0) == 0 ? json(f[8]) : json(nullptr)},
  };
}

json parse_compute_apps(const std::string& text, const std::string& gpu_uuid) {
  json processes = json::array();
  for (const auto& line : non_empty_lines(text)) {
    const auto f = split_csv_fields(line);
    if (f.size() < 4) continue;
    if (!gpu_uuid.empty() && f.front() != gpu_uuid) continue;
    const json pid = number_or_null(f[1], true);
    if (pid.is_null()) continue;  // not a process line ("No running processes found")
    // A process name may itself hold commas: it is everything between pid and memory.
    std::string name = f[2];
    for (std::size_t i = 3; i + 1 < f.size(); ++i) name += "," + f[i];
    processes.push_back({{"pid", pid}, {"name", name}, {"used_mib", number_or_null(f.back(), true)}});
  }
  return processes;
}

json decode_clock_event_reasons(const std::string& hex) {
  const std::string token = trim(hex);
  if (token.size() < 3 || token[0] != '0' || (token[1] != 'x' && token[1] != 'X')) return nullptr;
  char* end = nullptr;
  const std::uint64_t bits = std::strtoull(token.c_str() + 2, &end, 16);
  if (end != token.c_str() + token.size()) return nullptr;
  json names = json::array();
  std::uint64_t unknown = bits;
  for (const auto& r : kReasonBits) {
    if (bits & r.bit) names.push_back(r.name);
    unknown &= ~r.bit;
  }
  if (unknown) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "unknown_0x%llx", static_cast<unsigned long long>(unknown));
    names.push_back(buf);
  }
  return {{"hex", token}, {"names", names}};
}

json query_gpu_load(const std::string& uuid_or_index) {
  if (!is_safe_gpu_id(uuid_or_index)) return unavailable("bad GPU id '" + uuid_or_index + "'");
  std::string why;
  const auto gpu_text = run_nvidia_smi(
      {"--query-gpu=utilization.gpu,utilization.memory,clocks.sm,clocks.mem,temperature.gpu,"
       "power.draw,memory.used,clocks_event_reasons.active,uuid",
       "--format=csv,noheader,nounits", "-i", uuid_or_index},
      &why);
  if (!gpu_text) return unavailable(why);
  const auto lines = non_empty_lines(*gpu_text);
  if (lines.empty()) return unavailable("nvidia-smi printed nothing for GPU " + uuid_or_index);

  json snapshot;
  try {
    snapshot = parse_gpu_query_line(lines.front());
  } catch (const std::invalid_argument& e) {
    return unavailable(e.what());
  }
  snapshot["available"] = true;
  snapshot["time"] = utc_now();

  // The apps query lists every GPU's processes; keep only this GPU's, so that a job on a
  // neighbouring GPU of the same host is not reported as load on ours.
  const auto apps_text = run_nvidia_smi(
      {"--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv,noheader,nounits"},
      &why);
  if (apps_text) {
    snapshot["processes"] = parse_compute_apps(
        *apps_text, snapshot["uuid"].is_string() ? snapshot["uuid"].get<std::string>() : "");
  } else {
    snapshot["processes"] = nullptr;
    snapshot["processes_error"] = why;
  }
  return snapshot;
}

std::vector<std::string> load_warnings(const json& before, const json& after, int own_pid) {
  std::vector<std::string> warnings;
  for (const auto* snapshot : {&before, &after}) {
    if (is_available(*snapshot)) continue;
    const std::string reason =
        snapshot->is_object() ? snapshot->value("reason", std::string("no snapshot")) : "no snapshot";
    warnings.push_back("GPU load not recorded (" + reason +
                       "): a busy or throttled GPU would go unnoticed");
    break;  // one such warning is enough
  }

  if (is_available(before) && before["utilization_pct"].is_number() &&
      before["utilization_pct"].get<double>() > kBusyUtilizationPct)
    warnings.push_back("GPU was " + before["utilization_pct"].dump() +
                       "% busy before the run: other work may have inflated the timings");

  std::set<std::int64_t> seen;
  std::string others;
  for (const auto* snapshot : {&before, &after}) {
    if (!is_available(*snapshot) || !(*snapshot)["processes"].is_array()) continue;
    for (const auto& p : (*snapshot)["processes"]) {
      const auto pid = p["pid"].get<std::int64_t>();
      if (pid == own_pid || !seen.insert(pid).second) continue;
      if (!others.empty()) others += ", ";
      others += "pid " + std::to_string(pid) + " (" + p["name"].get<std::string>() +
                (p["used_mib"].is_number() ? ", " + p["used_mib"].dump() + " MiB" : "") + ")";
    }
  }
  if (!others.empty()) warnings.push_back("other processes use this GPU: " + others);

  for (const auto& [snapshot, when] : {std::pair{&before, "before"}, std::pair{&after, "after"}}) {
    if (!is_available(*snapshot) || !(*snapshot)["clock_event_reasons"].is_object()) continue;
    std::string limits;
    for (const auto& name : (*snapshot)["clock_event_reasons"]["names"]) {
      if (!kLimitingReasons.count(name.get<std::string>())) continue;
      if (!limits.empty()) limits += ", ";
      limits += name.get<std::string>();
    }
    if (!limits.empty())
      warnings.push_back(std::string("clocks were held down ") + when + " the run by " + limits);
  }
  return warnings;
}

}  // namespace kbench
