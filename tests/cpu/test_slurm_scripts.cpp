// scripts/slurm/ without Slurm: the array script run with the array's variables set by hand and
// KBENCH pointing to a fake that records its arguments; its refusals; the merge script over a
// shard folder, with the fake and then with the real kbench on shard results made by hand; and
// submit.sh with a fake sbatch.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu/run_command.hpp"
#include "cpu/shard_fixture.hpp"
#include "record/manifest.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

const fs::path kSlurm = source_root() / "scripts" / "slurm";

struct Fake {
  fs::path dir = test::fresh_temp_dir();
  fs::path argv_log = dir / "argv";
  fs::path program = dir / "fake";
  // A program that writes each argument on a line of its own (a blank line between calls) and,
  // when it is sbatch, prints a job id: 1001, 1002, ...
  explicit Fake(bool sbatch = false) {
    std::ofstream(program) << "#!/bin/bash\nfor a in \"$@\"; do echo \"$a\"; done >>" + test::shell_quoted(argv_log) +
                                  "\necho >>" + test::shell_quoted(argv_log) + "\n" +
                                  (sbatch ? "n=$(grep -c '^$' " + test::shell_quoted(argv_log) + "); echo \"$((1000 + n));cluster\"\n" : "");
    fs::permissions(program, fs::perms::owner_all);
  }
  ~Fake() { fs::remove_all(dir); }
  std::vector<std::string> calls() const {
    std::vector<std::string> out(1);
    std::istringstream in(test::read_file(argv_log));
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) out.emplace_back();
      else out.back() += (out.back().empty() ? "" : " ") + line;
    }
    out.pop_back();
    return out;
  }
  // Runs `script` from the fake's folder with the environment `env` ("A=1 B=2") and nothing
  // else of Slurm's.
  test::CommandResult run(const std::string& script, const std::string& env, const std::string& args) const {
    return test::run_command("cd " + test::shell_quoted(dir) +
                             " && env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_MIN -u SLURM_ARRAY_TASK_STEP "
                             "-u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_JOB_ID -u KBENCH_SHARDS -u KBENCH_SHARD_DIR "
                             "KBENCH=" + test::shell_quoted(program) + " " + env + " bash " +
                             test::shell_quoted(kSlurm / script) + " " + args);
  }
};

TEST(SlurmScripts, EachArrayTaskRunsItsShard) {
  const Fake fake;
  const std::string array = "SLURM_ARRAY_JOB_ID=77 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_MIN=0";
  for (int task = 0; task < 4; ++task) {
    const auto r = fake.run("kbench-array.sbatch", array + " SLURM_ARRAY_TASK_ID=" + std::to_string(task),
                            "run --config configs/quick.json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  // Ids from 5, the count set by hand, the folder named.
  EXPECT_EQ(fake.run("kbench-array.sbatch",
                     "SLURM_ARRAY_JOB_ID=78 SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=5 KBENCH_SHARDS=3 "
                     "KBENCH_SHARD_DIR=/scratch/s",
                     "grid --op softmax")
                .exit_code,
            0);
  const auto calls = fake.calls();
  ASSERT_EQ(calls.size(), 5u);
  for (int task = 0; task < 4; ++task)
    EXPECT_EQ(calls[static_cast<std::size_t>(task)],
              "run --config configs/quick.json --shard " + std::to_string(task) + "/4 --out shards/77");
  EXPECT_EQ(calls[4], "grid --op softmax --shard 1/3 --out /scratch/s");
}

TEST(SlurmScripts, TheArrayScriptRefusesWhatIsNotAShard) {
  const Fake fake;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"SLURM_ARRAY_TASK_COUNT=4", "run --op add --shape 8"},                             // no task id
      {"SLURM_ARRAY_TASK_ID=x SLURM_ARRAY_TASK_COUNT=4", "run --op add --shape 8"},        // not a number
      {"SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_COUNT=4", "run --op add --shape 8"},        // past the count
      {"SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=2 SLURM_ARRAY_TASK_COUNT=4", "run"},    // before the first
      {"SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_STEP=2", "run"},   // ids with a step
      {"SLURM_ARRAY_TASK_ID=0", "run --op add --shape 8"},                                 // no count
      {"SLURM_ARRAY_TASK_ID=0 KBENCH_SHARDS=0", "run --op add --shape 8"},                 // a count of 0
      {"SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2", ""},                              // no command
      {"SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2", "run --shard 0/2"},               // its own shard
      {"SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2", "run --out=elsewhere"},
      {"SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2", "run --devices 0,1"},
  };
  for (const auto& [env, args] : bad) {
    const auto r = fake.run("kbench-array.sbatch", env, args);
    EXPECT_EQ(r.exit_code, 2) << env << " / " << args << ": " << r.err;
    EXPECT_EQ(test::line_count(r.err), 1) << r.err;
  }
  EXPECT_EQ(bad.size(), 11u);
  EXPECT_TRUE(fake.calls().empty());
}

TEST(SlurmScripts, TheMergeScriptMergesTheShardFolder) {
  const Fake fake;
  fs::create_directories(fake.dir / "shards" / "77" / "sweep");
  for (const char* name : {"sweep-b.json", "sweep-a.json"}) std::ofstream(fake.dir / "shards" / "77" / "sweep" / name) << "{}";
  EXPECT_EQ(fake.run("kbench-merge.sbatch", "", "shards/77 --allow-missing").exit_code, 0);
  ASSERT_EQ(fake.calls().size(), 1u);
  EXPECT_EQ(fake.calls()[0], "merge shards/77/sweep/sweep-a.json shards/77/sweep/sweep-b.json --allow-missing");
  const auto empty = fake.run("kbench-merge.sbatch", "", "shards/78");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("no shard results under shards/78"), std::string::npos) << empty.err;
  EXPECT_EQ(fake.run("kbench-merge.sbatch", "", "").exit_code, 2);
  EXPECT_EQ(fake.calls().size(), 1u);
}

// The merge script with the real kbench, on the results two array tasks would have written.
TEST(SlurmScripts, TheMergeScriptWithKbenchWritesTheMergedResult) {
  const fs::path work = test::fresh_temp_dir();
  for (int k = 0; k < 2; ++k) write_result(test::synthetic_shard(k, 2, 5, test::fixed_git()), work / "shards" / "9" / "sweep");
  const auto r = test::run_command("cd " + test::shell_quoted(work) + " && KBENCH=" + test::shell_quoted(KBENCH_BINARY) +
                                   " bash " + test::shell_quoted(kSlurm / "kbench-merge.sbatch") + " shards/9");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  int merged = 0;
  for (const auto& e : fs::directory_iterator(work / "results" / "sweep")) {
    EXPECT_EQ(read_result(e.path()).records.size(), 10u);
    ++merged;
  }
  EXPECT_EQ(merged, 1);
  fs::remove_all(work);
}

TEST(SlurmScripts, SubmitQueuesTheArrayAndTheMergeAfterIt) {
  const Fake sbatch(/*sbatch=*/true);
  const auto r = test::run_command("cd " + test::shell_quoted(sbatch.dir) + " && SBATCH=" + test::shell_quoted(sbatch.program) +
                                   " KBENCH_SBATCH_ARGS='--partition gpu' bash " + test::shell_quoted(kSlurm / "submit.sh") +
                                   " 4 run --config configs/foundation.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto calls = sbatch.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], "--parsable --partition gpu --array=0-3 " + (kSlurm / "kbench-array.sbatch").string() +
                          " run --config configs/foundation.json");
  EXPECT_EQ(calls[1], "--parsable --partition gpu --dependency=afterany:1001 " + (kSlurm / "kbench-merge.sbatch").string() +
                          " shards/1001");
  EXPECT_NE(r.out.find("array job 1001 (4 shards under shards/1001), merge job 1002"), std::string::npos) << r.out;
  EXPECT_EQ(test::run_command("SBATCH=" + test::shell_quoted(sbatch.program) + " bash " +
                              test::shell_quoted(kSlurm / "submit.sh") + " 0 run")
                .exit_code,
            2);
}

}  // namespace
}  // namespace kbench
