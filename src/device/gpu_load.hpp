// GPU load as nvidia-smi reports it, recorded before and after a run so that a result taken
// on a busy, hot or power-capped GPU says so. nvidia-smi rather than NVML: nothing to link,
// and a machine without it still runs (the snapshot then says "available": false).
//
// The parsers take nvidia-smi's text and are pure, so the CPU tests can feed them real lines.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kbench {

// Runs nvidia-smi with `args` (an argument vector, no shell), stderr discarded and a time
// limit. Returns its stdout, or nullopt when nvidia-smi is missing, fails or times out (`why`
// then says which).
std::optional<std::string> run_nvidia_smi(const std::vector<std::string>& args,
                                          std::string* why = nullptr);

// One line of `--query-gpu=utilization.gpu,utilization.memory,clocks.sm,clocks.mem,
// temperature.gpu,power.draw,memory.used,clocks_event_reasons.active,uuid
// --format=csv,noheader,nounits`. Fields such as "[N/A]" become null. Throws
// std::invalid_argument when the line does not have the expected number of fields.
nlohmann::json parse_gpu_query_line(const std::string& line);

// `--query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits`:
// the processes on the GPU whose uuid is `gpu_uuid` (all of them when it is empty), as
// [{"pid","name","used_mib"}].
nlohmann::json parse_compute_apps(const std::string& text, const std::string& gpu_uuid);

// "0x0000000000000024" => {"hex": "0x0000000000000024", "names": ["sw_power_cap",
// "sw_thermal_slowdown"]}; null when the field is not a hex number ("[N/A]").
nlohmann::json decode_clock_event_reasons(const std::string& hex);

// A snapshot of one GPU (a uuid such as "GPU-…" or an index): the parsed query plus
// "available": true, "processes" and "time" (ISO-8601, UTC); or {"available": false,
// "reason": "..."} when nvidia-smi cannot answer.
nlohmann::json query_gpu_load(const std::string& uuid_or_index);

// Warnings for a result file, from the snapshots taken before and after a run: a busy GPU
// (over 10% before), other processes on the GPU, clocks held down by power or heat, or no
// nvidia-smi at all. `own_pid` is this process, which is expected on the GPU.
std::vector<std::string> load_warnings(const nlohmann::json& before, const nlohmann::json& after,
                                       int own_pid);

}  // namespace kbench
