#include "record/merge.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "core/errors.hpp"

namespace kbench {

namespace {

using nlohmann::json;

// meta.shard, read and checked.
struct ShardMeta {
  int index = 0, count = 1;
  std::string command, plan;
  std::size_t cases = 0;
};

std::string name_of(const ShardInput& in) { return in.file.empty() ? "a shard result" : in.file; }

ShardMeta shard_meta(const ShardInput& in) {
  const auto it = in.result.meta.find("shard");
  if (it == in.result.meta.end() || !it->is_object())
    throw UsageError(name_of(in) + ": not a shard's result (no meta.shard; a run with --shard i/n writes one)");
  const json& s = *it;
  const auto bad = [&](const std::string& what) { return UsageError(name_of(in) + ": meta.shard." + what); };
  for (const char* key : {"index", "count", "plan_cases"})
    if (!s.contains(key) || !s[key].is_number_integer() || s[key].get<std::int64_t>() < 0)
      throw bad(std::string(key) + " must be a whole number");
  for (const char* key : {"command", "plan_sha256"})
    if (!s.contains(key) || !s[key].is_string()) throw bad(std::string(key) + " must be a string");
  if (!s.contains("cases") || !s["cases"].is_array()) throw bad("cases must be a list");
  ShardMeta m;
  const std::int64_t index = s["index"].get<std::int64_t>(), count = s["count"].get<std::int64_t>();
  if (count < 1 || count > 1000000 || index >= count) throw bad("index must be below count (1 to 1000000)");
  m.index = static_cast<int>(index);
  m.count = static_cast<int>(count);
  m.command = s["command"].get<std::string>();
  m.plan = s["plan_sha256"].get<std::string>();
  m.cases = s["cases"].size();
  return m;
}

std::string label(const ShardMeta& m) { return std::to_string(m.index) + "/" + std::to_string(m.count); }

std::string text_of(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() ? "" : it->is_string() ? it->get<std::string>() : it->dump();
}

std::string record_key(const Record& r) {
  std::string key = r.op + "/" + r.variant + " " + r.dtype + " ";
  for (std::size_t i = 0; i < r.shape.size(); ++i) key += (i ? "x" : "") + std::to_string(r.shape[i]);
  for (const auto& [name, value] : r.params) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s=%.17g", name.c_str(), value);
    key += buf;
  }
  return key + " " + r.cache + " " + r.timer;
}

// The first of `keys` whose value differs between a and b, as "key 'x' vs 'y'"; empty if none.
std::string first_difference(const json& a, const json& b, std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (text_of(a, key) != text_of(b, key))
      return std::string(key) + " '" + text_of(a, key) + "' vs '" + text_of(b, key) + "'";
  return "";
}

std::string source_difference(const Result& a, const Result& b) {
  const json empty = json::object();
  const json& fa = a.manifest.contains("files") ? a.manifest["files"] : empty;
  const json& fb = b.manifest.contains("files") ? b.manifest["files"] : empty;
  std::vector<std::string> differ;
  for (const auto& [path, hash] : fa.items())
    if (!fb.contains(path) || fb[path] != hash) differ.push_back(path);
  for (const auto& [path, hash] : fb.items())
    if (!fa.contains(path)) differ.push_back(path);
  if (differ.empty()) return "";
  std::sort(differ.begin(), differ.end());
  return std::to_string(differ.size()) + " source file(s) differ (first: " + differ.front() + ")";
}

std::string git_difference(const Result& a, const Result& b) {
  const json empty = json::object();
  const json& ga = a.meta.contains("git") && a.meta["git"].is_object() ? a.meta["git"] : empty;
  const json& gb = b.meta.contains("git") && b.meta["git"].is_object() ? b.meta["git"] : empty;
  return first_difference(ga, gb, {"commit", "dirty", "diff_sha256"});
}

// Every record of `in` under the key merge checks overlap by.
void note_records(const ShardInput& in, std::map<std::string, std::string>& owner) {
  for (const Record& r : in.result.records) {
    const auto [it, fresh] = owner.emplace(record_key(r), name_of(in));
    if (!fresh)
      throw UsageError("overlapping shards: " + it->second + " and " + name_of(in) + " both hold " + it->first);
  }
}

void erase_pointer(json& extra, const std::string& pointer) {
  const json::json_pointer p(pointer);
  if (!extra.contains(p)) return;
  json& parent = extra[p.parent_pointer()];
  if (parent.is_object()) parent.erase(p.back());
}

std::string first_meta_string(const std::vector<const ShardInput*>& in, const char* key, bool latest) {
  std::string out;
  for (const ShardInput* s : in) {
    const std::string v = text_of(s->result.meta, key);
    if (v.empty()) continue;
    if (out.empty() || (latest ? v > out : v < out)) out = v;  // ISO-8601 UTC sorts as text
  }
  return out;
}

json shard_entry(const ShardInput& in, const ShardMeta& m) {
  const json& meta = in.result.meta;
  json e = {{"index", m.index}, {"count", m.count}, {"cases", m.cases}, {"records", in.result.records.size()}};
  if (!in.file.empty()) e["file"] = in.file;
  for (const char* key : {"uuid", "pci_bus_id"})
    if (in.result.device.contains(key)) e[key] = in.result.device[key];
  for (const char* key : {"host", "argv", "started", "visits_started", "finished", "seconds", "incomplete"})
    if (meta.contains(key)) e[key] = meta[key];
  e["warmup"] = in.result.warmup;
  e["load"] = in.result.load;
  return e;
}

}  // namespace

std::string shard_command(const ShardInput& in) { return shard_meta(in).command; }

Result merge_shards(const std::vector<ShardInput>& shards, const MergeOptions& options) {
  if (shards.empty()) throw UsageError("merge: no shard results given");
  std::vector<ShardMeta> metas;
  for (const ShardInput& in : shards) metas.push_back(shard_meta(in));
  std::vector<std::size_t> order(shards.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return metas[a].index < metas[b].index; });

  const ShardInput& first = shards[order.front()];
  const ShardMeta& m0 = metas[order.front()];
  std::vector<std::string> mismatches;
  const auto mismatch = [&](const ShardInput& in, const std::string& what) {
    mismatches.push_back(name_of(in) + " and " + name_of(first) + " differ: " + what);
  };
  std::map<std::string, std::string> taken;  // plan hash and "i/n" -> file
  std::map<int, std::string> seen;  // shard index -> file, among shards of the first's count
  std::map<std::string, std::string> owner;
  for (const std::size_t i : order) {
    const ShardInput& in = shards[i];
    const ShardMeta& m = metas[i];
    if (in.result.experiment != first.result.experiment)
      throw UsageError("refusing to mix experiments: " + name_of(first) + " is '" + first.result.experiment + "', " +
                       name_of(in) + " '" + in.result.experiment + "'");
    if (m.command != m0.command)
      throw UsageError("refusing to mix commands: " + name_of(first) + " is a shard of '" + m0.command + "', " +
                       name_of(in) + " of '" + m.command + "'");
    const bool same_plan = m.plan == m0.plan && m.count == m0.count;
    const auto [it, fresh] = taken.emplace(m.plan + " " + label(m), name_of(in));
    if (!fresh) throw UsageError("overlapping shards: " + it->second + " and " + name_of(in) + " are both shard " + label(m));
    if (m.count == m0.count) seen.emplace(m.index, name_of(in));  // another plan's only where allowed (below)
    note_records(in, owner);
    if (&in == &first) continue;
    if (!same_plan)
      mismatch(in, m.count != m0.count ? "plan: shards of " + std::to_string(m.count) + " vs " + std::to_string(m0.count)
                                       : "plan: hash " + m.plan.substr(0, 12) + " vs " + m0.plan.substr(0, 12));
    if (const std::string d = source_difference(in.result, first.result); !d.empty()) mismatch(in, "sources: " + d);
    if (const std::string d = git_difference(in.result, first.result); !d.empty()) mismatch(in, "git " + d);
    if (const std::string d = first_difference(in.result.device, first.result.device,
                                               {"name", "cc", "sms", "l2_bytes", "memory_bytes"});
        !d.empty())
      mismatch(in, "GPU model: " + d);
    if (const std::string d = first_difference(in.result.device, first.result.device,
                                               {"driver", "driver_version", "cuda_runtime", "cublas"});
        !d.empty())
      mismatch(in, "GPU software: " + d);
  }
  if (!mismatches.empty() && !options.allow_mismatch)
    throw UsageError("refusing to merge: " + mismatches.front() + " (--allow-mismatch merges them anyway)");
  std::vector<int> missing;
  for (int i = 0; i < m0.count; ++i)
    if (!seen.count(i)) missing.push_back(i);
  if (!missing.empty() && !options.allow_missing) {
    std::string list;
    for (std::size_t k = 0; k < missing.size() && k < 5; ++k) list += (k ? ", " : "") + std::to_string(missing[k]) + "/" + std::to_string(m0.count);
    if (missing.size() > 5) list += " and " + std::to_string(missing.size() - 5) + " more";
    throw UsageError("refusing to merge: missing shard(s) " + list + " of plan " + m0.plan.substr(0, 12) +
                     " (--allow-missing merges the others)");
  }

  std::vector<const ShardInput*> sorted;
  for (const std::size_t i : order) sorted.push_back(&shards[i]);
  Result out;
  out.experiment = first.result.experiment;
  out.meta = first.result.meta;
  for (const char* key : {"shard", "visits_started", "seconds", "incomplete"}) out.meta.erase(key);
  out.meta["started"] = first_meta_string(sorted, "started", false);
  out.meta["finished"] = first_meta_string(sorted, "finished", true);
  std::vector<std::string> hosts;
  for (const ShardInput* s : sorted) {
    const std::string h = text_of(s->result.meta, "host");
    if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
  }
  std::string host;
  for (const auto& h : hosts) host += (host.empty() ? "" : ", ") + h;
  out.meta["host"] = host;

  json entries = json::array(), warnings = json::array(), incomplete_shards = json::array();
  std::set<std::string> uuids;
  long long visits_done = 0, visits_planned = 0;
  std::string signal;
  for (const std::size_t i : order) {
    const ShardInput& in = shards[i];
    entries.push_back(shard_entry(in, metas[i]));
    uuids.insert(text_of(in.result.device, "uuid"));
    if (in.result.load.contains("warnings") && in.result.load["warnings"].is_array())
      for (const json& w : in.result.load["warnings"])
        warnings.push_back("shard " + label(metas[i]) + ": " + (w.is_string() ? w.get<std::string>() : w.dump()));
    const auto inc = in.result.meta.find("incomplete");
    if (inc != in.result.meta.end() && inc->is_object()) {
      incomplete_shards.push_back(metas[i].index);
      visits_done += inc->value("visits_done", 0LL);
      visits_planned += inc->value("visits_planned", 0LL);
      if (signal.empty()) signal = inc->value("signal", "SIGINT");
    }
    for (const Record& r : in.result.records) out.records.push_back(r);
  }
  out.meta["shards"] = entries;
  json seen_list = json::array();
  for (const auto& [index, file] : seen) seen_list.push_back(index);
  out.meta["merge"] = {{"plan_sha256", m0.plan}, {"count", m0.count}, {"shards", seen_list},
                       {"missing", missing}, {"allowed", mismatches}};
  if (!incomplete_shards.empty())
    out.meta["incomplete"] = {{"signal", signal}, {"visits_done", visits_done}, {"visits_planned", visits_planned},
                              {"shards", incomplete_shards}};

  out.device = first.result.device;
  if (uuids.size() > 1) {  // one device block cannot name several GPUs; meta.shards does
    out.device.erase("uuid");
    out.device.erase("pci_bus_id");
  }
  out.warmup = first.result.warmup;
  out.load = {{"before", first.result.load.value("before", json::object())},
              {"after", first.result.load.value("after", json::object())},
              {"warnings", warnings}};

  out.manifest = first.result.manifest;
  json measured = json::object();
  for (const ShardInput* s : sorted) {
    const auto it = s->result.manifest.find("measured");
    if (it == s->result.manifest.end() || !it->is_object()) continue;
    for (const auto& [op, files] : it->items()) {
      json& list = measured[op];
      if (!list.is_array()) list = json::array();
      for (const json& f : files)
        if (std::find(list.begin(), list.end(), f) == list.end()) list.push_back(f);
    }
  }
  out.manifest["measured"] = measured;

  // Extra blocks: recomputed ones dropped; lists of cases joined; the rest kept when every
  // shard has it equal, else moved to extra.shards (one object per shard, by its index).
  std::vector<json> extras;
  for (const ShardInput* s : sorted) {
    json e = s->result.extra;
    for (const auto& p : options.recomputed) erase_pointer(e, p);
    extras.push_back(std::move(e));
  }
  std::set<std::string> keys;
  for (const json& e : extras)
    for (const auto& [key, value] : e.items()) keys.insert(key);
  json per_shard = json::array();
  for (std::size_t k = 0; k < sorted.size(); ++k) per_shard.push_back({{"index", metas[order[k]].index}});
  bool any_per_shard = false;
  for (const std::string& key : keys) {
    if (key == "check_failures" || key == "skipped") {
      json joined = json::array();
      for (const json& e : extras)
        if (e.contains(key) && e[key].is_array())
          for (const json& item : e[key]) joined.push_back(item);
      out.extra[key] = joined;
      continue;
    }
    const bool equal = std::all_of(extras.begin(), extras.end(),
                                   [&](const json& e) { return e.contains(key) && e[key] == extras.front()[key]; });
    if (equal) {
      out.extra[key] = extras.front()[key];
      continue;
    }
    for (std::size_t k = 0; k < extras.size(); ++k)
      if (extras[k].contains(key)) per_shard[k][key] = extras[k][key];
    any_per_shard = true;
  }
  if (any_per_shard) out.extra["shards"] = per_shard;
  return out;
}

}  // namespace kbench
