// kbench merge (record/merge.hpp, experiments/shard_merge.hpp): shards of one plan join into one
// result that lists them and is analysed as a whole; every kind of refusal is one line and
// nothing joined; what --allow-mismatch and --allow-missing let through is recorded; the joined
// result verifies, and report and compare read it.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "cpu/run_command.hpp"
#include "cpu/shard_fixture.hpp"
#include "cpu/verify_fixture.hpp"
#include "experiments/shard_merge.hpp"
#include "record/merge.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

std::vector<ShardInput> shards_of(int count, std::size_t cases, const nlohmann::json& git = test::fixed_git()) {
  std::vector<ShardInput> out;
  for (int i = 0; i < count; ++i) out.push_back({"s" + std::to_string(i) + ".json", test::synthetic_shard(i, count, cases, git)});
  return out;
}

std::string refusal(const std::vector<ShardInput>& shards, const MergeOptions& o = {}) {
  try {
    merge_and_analyse(shards, o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

MergeOptions allowing(bool mismatch, bool missing) {
  MergeOptions o;
  o.allow_mismatch = mismatch;
  o.allow_missing = missing;
  return o;
}

TEST(Merge, JoinsTheShardsOfAPlan) {
  const auto shards = shards_of(3, 7);
  const Result m = merge_and_analyse(shards, {});
  EXPECT_EQ(m.experiment, "sweep");
  ASSERT_EQ(m.records.size(), 14u);  // 7 cases x 2 variants, each once
  std::set<std::string> keys;
  for (const Record& r : m.records) keys.insert(r.variant + " " + std::to_string(r.shape.at(0)));
  EXPECT_EQ(keys.size(), 14u);
  EXPECT_FALSE(m.meta.contains("shard"));
  EXPECT_FALSE(m.meta.contains("seconds"));
  EXPECT_EQ(m.meta.at("started"), "2026-01-01T00:00:00Z");
  EXPECT_EQ(m.meta.at("finished"), "2026-01-01T00:02:50Z");
  EXPECT_EQ(m.meta.at("host"), "node-0, node-1, node-2");
  const auto& list = m.meta.at("shards");
  ASSERT_EQ(list.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(list[i].at("index"), i);
    EXPECT_EQ(list[i].at("file"), "s" + std::to_string(i) + ".json");
    EXPECT_EQ(list[i].at("uuid"), "GPU-0000000" + std::to_string(i));
    EXPECT_EQ(list[i].at("started"), shards[i].result.meta.at("started"));
    EXPECT_EQ(list[i].at("finished"), shards[i].result.meta.at("finished"));
    EXPECT_EQ(list[i].at("warmup"), shards[i].result.warmup);
    EXPECT_EQ(list[i].at("records"), shards[i].result.records.size());
  }
  const auto& merge = m.meta.at("merge");
  EXPECT_EQ(merge.at("plan_sha256"), test::kPlanHash);
  EXPECT_EQ(merge.at("count"), 3);
  EXPECT_EQ(merge.at("shards"), nlohmann::json({0, 1, 2}));
  EXPECT_TRUE(merge.at("missing").empty());
  EXPECT_TRUE(merge.at("allowed").empty());
  // Three GPUs: the device block names none of them; meta.shards names each.
  EXPECT_FALSE(m.device.contains("uuid"));
  EXPECT_FALSE(m.device.contains("pci_bus_id"));
  EXPECT_EQ(m.device.at("name"), "NVIDIA H200");
  EXPECT_EQ(m.warmup, shards[0].result.warmup);
  EXPECT_EQ(m.load.at("warnings"), nlohmann::json({"shard 0/3: load 0", "shard 1/3: load 1", "shard 2/3: load 2"}));
  // Extra: the timer floors differ per shard, the skips join, the comparisons are the whole
  // plan's (sweep_analysis over the joined records: one per case), not any shard's.
  EXPECT_FALSE(m.extra.contains("timer_floor"));
  ASSERT_EQ(m.extra.at("shards").size(), 3u);
  EXPECT_EQ(m.extra.at("shards")[2].at("index"), 2);
  EXPECT_EQ(m.extra.at("shards")[2].at("timer_floor"), shards[2].result.extra.at("timer_floor"));
  EXPECT_FALSE(m.extra.at("shards")[2].contains("comparisons"));
  EXPECT_EQ(m.extra.at("skipped").size(), 3u);
  EXPECT_EQ(m.extra.at("check_failures").size(), 0u);
  EXPECT_EQ(m.extra.at("comparisons").size(), 7u);
  EXPECT_EQ(m.manifest.at("measured"), shards[0].result.manifest.at("measured"));
  // A schema v1 result: it survives its own JSON.
  EXPECT_EQ(to_json(result_from_json(to_json(m))), to_json(m));
}

TEST(Merge, TheOrderGivenDoesNotMatterAndOneGpuKeepsItsUuid) {
  auto shards = shards_of(3, 7);
  const Result in_order = merge_and_analyse(shards, {});
  std::reverse(shards.begin(), shards.end());
  EXPECT_EQ(records_digest(merge_and_analyse(shards, {}).records), records_digest(in_order.records));
  for (auto& s : shards) s.result.device["uuid"] = "GPU-same";
  EXPECT_EQ(merge_and_analyse(shards, {}).device.at("uuid"), "GPU-same");
}

TEST(Merge, AnEmptyShardJoinsToo) {
  const auto shards = shards_of(4, 3);  // shard 0 of 4 over 3 cases holds none
  ASSERT_TRUE(shards[0].result.records.empty());
  const Result m = merge_and_analyse(shards, {});
  EXPECT_EQ(m.records.size(), 6u);
  EXPECT_EQ(m.meta.at("shards")[0].at("cases"), 0);
}

TEST(Merge, RefusesWhatIsNotOnePlan) {
  using Edit = std::function<void(std::vector<ShardInput>&)>;
  const std::vector<std::tuple<std::string, Edit, std::string>> cases = {
      {"not a shard", [](auto& s) { s[1].result.meta.erase("shard"); }, "s1.json: not a shard's result"},
      {"a shard index as text", [](auto& s) { s[1].result.meta["shard"]["index"] = "1"; }, "meta.shard.index"},
      {"an index past the count", [](auto& s) { s[1].result.meta["shard"]["index"] = 3; }, "index must be below count"},
      {"no plan hash", [](auto& s) { s[1].result.meta["shard"].erase("plan_sha256"); }, "meta.shard.plan_sha256"},
      {"another experiment", [](auto& s) { s[1].result.experiment = "rooflines"; }, "refusing to mix experiments"},
      {"another command", [](auto& s) { s[1].result.meta["shard"]["command"] = "grid"; }, "refusing to mix commands"},
      {"a shard twice", [](auto& s) { s[1] = {"again.json", s[0].result}; }, "overlapping shards: s0.json and again.json are both shard 0/3"},
      {"a record twice", [](auto& s) { s[1].result.records.push_back(s[0].result.records.front()); }, "overlapping shards: s0.json and s1.json both hold add/vec16"},
      {"a shard missing", [](auto& s) { s.pop_back(); }, "missing shard(s) 2/3 of plan 0123456789ab"},
      {"another plan", [](auto& s) { s[1].result.meta["shard"]["plan_sha256"] = std::string(64, 'f'); }, "plan: hash ffffffffffff vs 0123456789ab"},
      {"another count", [](auto& s) { s[1].result.meta["shard"]["count"] = 4; }, "plan: shards of 4 vs 3"},
      {"other sources", [](auto& s) { s[1].result.manifest["files"]["kernels/add/add.cu"] = "0"; }, "sources: 1 source file(s) differ (first: kernels/add/add.cu)"},
      {"another commit", [](auto& s) { s[1].result.meta["git"]["commit"] = std::string(40, 'b'); }, "git commit"},
      {"a dirty tree", [](auto& s) { s[1].result.meta["git"]["dirty"] = true; }, "git dirty"},
      {"another GPU model", [](auto& s) { s[1].result.device["name"] = "NVIDIA A100"; }, "GPU model: name 'NVIDIA A100' vs 'NVIDIA H200'"},
      {"another SM count", [](auto& s) { s[1].result.device["sms"] = 114; }, "GPU model: sms '114' vs '132'"},
      {"another driver", [](auto& s) { s[1].result.device["driver"] = "12.8"; }, "GPU software: driver '12.8' vs '13.0'"},
  };
  int refused = 0;
  for (const auto& [what, edit, expected] : cases) {
    auto shards = shards_of(3, 7);
    edit(shards);
    const std::string line = refusal(shards);
    EXPECT_TRUE(has(line, expected)) << what << ": " << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << what;
    refused += !line.empty();
  }
  EXPECT_EQ(refused, 17);
}

// What the options let through is joined and recorded; what they do not cover is still refused.
TEST(Merge, WhatIsAllowedIsRecorded) {
  auto other_gpu = shards_of(3, 7);
  other_gpu[2].result.device["name"] = "NVIDIA A100";
  EXPECT_TRUE(has(refusal(other_gpu, allowing(false, true)), "GPU model"));
  const Result m = merge_and_analyse(other_gpu, allowing(true, false));
  ASSERT_EQ(m.meta.at("merge").at("allowed").size(), 1u);
  EXPECT_TRUE(has(m.meta.at("merge").at("allowed")[0].get<std::string>(), "s2.json and s0.json differ: GPU model"));

  auto missing = shards_of(3, 7);
  missing.erase(missing.begin() + 1);
  EXPECT_TRUE(has(refusal(missing, allowing(true, false)), "missing shard(s) 1/3"));
  const Result partial = merge_and_analyse(missing, allowing(false, true));
  EXPECT_EQ(partial.meta.at("merge").at("missing"), nlohmann::json({1}));
  EXPECT_EQ(partial.meta.at("merge").at("shards"), nlohmann::json({0, 2}));

  // Shards of another count fill no place of this plan's: allowed as a mismatch, still missing.
  auto counts = shards_of(2, 7);
  counts[1] = {"of3.json", test::synthetic_shard(2, 3, 7, test::fixed_git())};  // cases apart from shard 0/2's
  EXPECT_TRUE(has(refusal(counts, allowing(true, false)), "missing shard(s) 1/2"));
  // Even allowed, a record in two shards is refused.
  auto twice = shards_of(3, 7);
  twice[1].result.meta["shard"]["plan_sha256"] = std::string(64, 'f');
  twice[1].result.records.push_back(twice[0].result.records.front());
  EXPECT_TRUE(has(refusal(twice, allowing(true, true)), "both hold"));
}

TEST(Merge, IncompleteShardsMakeAnIncompleteResult) {
  auto shards = shards_of(2, 4);
  shards[1].result.meta["incomplete"] = {{"signal", "SIGTERM"}, {"visits_done", 2}, {"visits_planned", 6}};
  const Result m = merge_and_analyse(shards, {});
  EXPECT_EQ(m.meta.at("incomplete").at("signal"), "SIGTERM");
  EXPECT_EQ(m.meta.at("incomplete").at("visits_done"), 2);
  EXPECT_EQ(m.meta.at("incomplete").at("shards"), nlohmann::json({1}));
  EXPECT_EQ(m.meta.at("shards")[1].at("incomplete").at("visits_planned"), 6);
  EXPECT_FALSE(merge_and_analyse(shards_of(2, 4), {}).meta.contains("incomplete"));
}

TEST(Merge, TheMeasuredFilesAreTheUnionOfTheShards) {
  auto shards = shards_of(2, 4);
  shards[1].result.manifest["measured"]["copy"] = {"kernels/copy/copy.cu"};
  shards[1].result.manifest["measured"]["add"].push_back("experiments/sweep.cpp");
  const Result m = merge_and_analyse(shards, allowing(true, false));
  EXPECT_EQ(m.manifest.at("measured").at("copy"), nlohmann::json({"kernels/copy/copy.cu"}));
  EXPECT_EQ(m.manifest.at("measured").at("add").size(), 3u);
}

// The joined result is a result like any other: verify traces it to its sources, report and
// compare read it, and compare finds it the same as the unsharded run of the same numbers.
TEST(Merge, TheJoinedResultVerifiesAndReportsAndCompares) {
  test::VerifyFixture f;
  std::vector<ShardInput> shards;
  for (int i = 0; i < 2; ++i)
    shards.push_back({"s" + std::to_string(i), test::synthetic_shard(i, 2, 5, f.git_clean())});
  const Result merged = merge_and_analyse(shards, {});
  fs::remove(f.result_file);
  f.result_file.clear();
  const fs::path merged_file = test::write_result_in(f.tree.path(), merged);
  const VerifyReport report = f.verify();
  EXPECT_TRUE(report.problems.empty()) << test::all_problems(report);

  Result whole = test::synthetic_shard(0, 1, 5, f.git_clean());
  whole.meta.erase("shard");
  const fs::path work = test::fresh_temp_dir();
  const fs::path whole_file = write_result(whole, work);
  const auto r = test::run_kbench("report " + test::shell_quoted(merged_file));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "add")) << r.out;
  const auto c = test::run_kbench("compare " + test::shell_quoted(whole_file) + " " + test::shell_quoted(merged_file) +
                                  " --fail-above 1");
  EXPECT_EQ(c.exit_code, 0) << c.err << c.out;
  fs::remove_all(work);
}

// The command: it writes one file under <out>/<experiment>/ and says what it joined.
TEST(Merge, TheCommandWritesOneFile) {
  const fs::path work = test::fresh_temp_dir();
  std::string args;
  for (int i = 0; i < 3; ++i) {
    const fs::path file = work / ("shard" + std::to_string(i) + ".json");
    fs::rename(write_result(test::synthetic_shard(i, 3, 7, test::fixed_git()), work / "w"), file);
    args += " " + test::shell_quoted(file);
  }
  const fs::path out = work / "out";
  const auto r = test::run_kbench("merge" + args + " --out " + test::shell_quoted(out));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "merged 3 shard(s) of 3 (plan 0123456789ab): 14 records")) << r.out;
  EXPECT_EQ(test::line_count(r.out), 1) << "stdout is the summary alone, the log on stderr: " << r.out;
  EXPECT_TRUE(has(r.err, "] info wrote " + (out / "sweep").string())) << r.err;
  int files = 0;
  for (const auto& e : fs::directory_iterator(out / "sweep")) {
    const Result m = read_result(e.path());
    EXPECT_EQ(m.records.size(), 14u);
    EXPECT_EQ(m.meta.at("argv")[1], "merge");
    EXPECT_TRUE(has(m.meta.at("shards")[2].at("file").get<std::string>(), "shard2.json"));
    ++files;
  }
  EXPECT_EQ(files, 1);
  fs::remove_all(work);
}

}  // namespace
}  // namespace kbench
