// --devices without a GPU (cli/workers.hpp, cli/devices_run.hpp): the worker's command line and
// visible device, and the parent's handling of workers, driven with a fake worker (a shell
// script that writes a canned shard result, dies, or refuses) in place of kbench.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/devices_run.hpp"
#include "cli/workers.hpp"
#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "cpu/run_command.hpp"
#include "cpu/shard_fixture.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

TEST(Workers, ParsesDeviceLists) {
  EXPECT_EQ(parse_devices("0"), std::vector<int>({0}));
  EXPECT_EQ(parse_devices("0,1,3"), std::vector<int>({0, 1, 3}));
  EXPECT_EQ(parse_devices("7,2"), std::vector<int>({7, 2}));
  EXPECT_EQ(parse_devices("1023"), std::vector<int>({1023}));
  int refused = 0;
  for (const char* bad : {"", ",", "0,", ",0", "0,,1", "0,0", "1,0,1", "a", "-1", "+1", " 0", "0 ", "1.5", "1024", "0x1", "0;1"}) {
    EXPECT_THROW(parse_devices(bad), UsageError) << "'" << bad << "'";
    ++refused;
  }
  EXPECT_EQ(refused, 16);
}

TEST(Workers, AWorkersCommandLineIsTheParentsAsAShard) {
  const std::vector<std::string> parent = {"kbench", "-q", "run", "--config", "c.json", "--devices", "0,1", "--out",
                                           "r", "--seed=5", "--visits", "3", "--device=2", "--shard", "0/9"};
  EXPECT_EQ(worker_argv(parent, "/opt/kbench", {1, 2}, "/w/1"),
            std::vector<std::string>({"/opt/kbench", "-q", "run", "--config", "c.json", "--seed=5", "--visits", "3",
                                      "--device", "0", "--shard", "1/2", "--out", "/w/1"}));
  const std::vector<std::string> eq_forms = {"kbench", "grid", "--devices=0,1", "--out=r", "--op", "softmax"};
  EXPECT_EQ(worker_argv(eq_forms, "k", {0, 2}, "o"),
            std::vector<std::string>({"k", "grid", "--op", "softmax", "--device", "0", "--shard", "0/2", "--out", "o"}));
}

TEST(Workers, AWorkerSeesItsDeviceThroughThisProcesssVisibleDevices) {
  EXPECT_EQ(worker_visible_device(nullptr, 3), "3");
  EXPECT_EQ(worker_visible_device("2,3", 0), "2");
  EXPECT_EQ(worker_visible_device("2,3", 1), "3");
  EXPECT_EQ(worker_visible_device("GPU-aa, GPU-bb", 1), "GPU-bb");
  EXPECT_THROW(worker_visible_device("2,3", 2), UsageError);
  EXPECT_THROW(worker_visible_device("", 0), UsageError);
}

// A folder of canned shard results and a fake worker that serves them: it reads --shard k/n and
// --out from its arguments, writes where CUDA_VISIBLE_DEVICES pointed it, and then, as the
// files in the folder say: dies (once, or every time), refuses (exit 2), exits 1, writes
// nothing, or waits for SIGINT and then writes its result (exit 130).
struct FakeWorker {
  fs::path dir = test::fresh_temp_dir();
  fs::path program = dir / "fake_worker.sh";
  explicit FakeWorker(int count, std::size_t cases = 6) {
    for (int k = 0; k < count; ++k)
      fs::rename(write_result(test::synthetic_shard(k, count, cases, test::fixed_git()), dir / "w"),
                 dir / ("shard_" + std::to_string(k) + ".json"));
    std::ofstream(program) << R"(#!/bin/bash
c=')" + dir.string() + R"('
while [ $# -gt 0 ]; do case "$1" in --shard) shard=$2; shift ;; --out) out=$2; shift ;; esac; shift; done
k=${shard%/*}
echo "fake worker $shard on $CUDA_VISIBLE_DEVICES"
echo "$CUDA_VISIBLE_DEVICES" >>"$c/visible_$k"
[ -e "$c/die_always_$k" ] && kill -9 $$
if [ -e "$c/die_once_$k" ] && [ ! -e "$c/died_$k" ]; then touch "$c/died_$k"; kill -9 $$; fi
[ -e "$c/refuse_$k" ] && { echo "kbench: error: no CUDA device visible: this command needs a CUDA GPU" >&2; exit 2; }
[ -e "$c/nothing_$k" ] && exit 0
if [ -e "$c/wait_$k" ]; then
  trap 'mkdir -p "$out/sweep"; cp "$c/shard_$k.json" "$out/sweep/s.json"; exit 130' INT
  touch "$c/waiting_$k"
  while true; do sleep 0.05; done
fi
mkdir -p "$out/sweep"
cp "$c/shard_$k.json" "$out/sweep/s.json"
[ -e "$c/exit1_$k" ] && exit 1
exit 0
)";
    fs::permissions(program, fs::perms::owner_all);
  }
  ~FakeWorker() { fs::remove_all(dir); }
  void mark(const std::string& name) const { std::ofstream(dir / name) << ""; }
  std::string visible(int k) const { return test::read_file(dir / ("visible_" + std::to_string(k))); }

  std::vector<WorkerReport> run(const std::vector<int>& devices) const {
    std::vector<WorkerJob> jobs;
    for (std::size_t k = 0; k < devices.size(); ++k)
      jobs.push_back({devices[k], "gpu" + std::to_string(devices[k]), {static_cast<int>(k), static_cast<int>(devices.size())}});
    const fs::path work = dir / "work";
    fs::create_directories(work);
    return run_workers(jobs, [&](const WorkerJob& job, const fs::path& out) {
      return worker_argv({"kbench", "run", "--op", "add"}, program.string(), job.shard, out);
    }, work);
  }
};

TEST(Workers, EachWorkerRunsItsShardOnItsDevice) {
  const FakeWorker fake(2);
  const auto reports = fake.run({3, 5});
  ASSERT_EQ(reports.size(), 2u);
  for (int k = 0; k < 2; ++k) {
    const WorkerReport& r = reports[static_cast<std::size_t>(k)];
    ASSERT_TRUE(r.result.has_value()) << r.failure;
    EXPECT_EQ(r.attempts, 1);
    EXPECT_TRUE(r.deaths.empty());
    EXPECT_EQ(r.result->meta.at("shard").at("index"), k);
    EXPECT_TRUE(fs::exists(r.file));
  }
  EXPECT_EQ(fake.visible(0), "gpu3\n");
  EXPECT_EQ(fake.visible(1), "gpu5\n");
}

TEST(Workers, AWorkerThatDiesRunsAgainOnce) {
  const FakeWorker fake(2);
  fake.mark("die_once_1");
  const auto reports = fake.run({0, 1});
  ASSERT_TRUE(reports[1].result.has_value()) << reports[1].failure;
  EXPECT_EQ(reports[1].attempts, 2);
  ASSERT_EQ(reports[1].deaths.size(), 1u);
  EXPECT_NE(reports[1].deaths[0].find("killed by signal 9"), std::string::npos) << reports[1].deaths[0];
  EXPECT_EQ(fake.visible(1), "gpu1\ngpu1\n");  // on the same device, in a fresh process
  EXPECT_EQ(reports[0].attempts, 1);
}

TEST(Workers, AWorkerThatDiesTwiceIsReported) {
  const FakeWorker fake(2);
  fake.mark("die_always_0");
  fake.mark("nothing_1");  // exits 0 without a result: a death too
  const auto reports = fake.run({0, 1});
  for (const WorkerReport& r : reports) {
    EXPECT_FALSE(r.result.has_value());
    EXPECT_EQ(r.attempts, 2);
    EXPECT_EQ(r.deaths.size(), 2u);
    EXPECT_FALSE(r.refused);
    EXPECT_NE(r.failure.find("on each of its 2 attempts"), std::string::npos) << r.failure;
  }
  EXPECT_NE(reports[0].failure.find("killed by signal 9"), std::string::npos) << reports[0].failure;
  EXPECT_NE(reports[1].failure.find("exit status 0 with 0 result files written"), std::string::npos) << reports[1].failure;
}

TEST(Workers, ARefusedWorkerIsNotStartedAgainAndOneThatExits1KeepsItsResult) {
  const FakeWorker fake(2);
  fake.mark("refuse_0");
  fake.mark("exit1_1");
  const auto reports = fake.run({0, 1});
  EXPECT_TRUE(reports[0].refused);
  EXPECT_EQ(reports[0].attempts, 1);
  EXPECT_NE(reports[0].failure.find("no CUDA device visible"), std::string::npos) << reports[0].failure;
  ASSERT_TRUE(reports[1].result.has_value()) << reports[1].failure;
  EXPECT_EQ(reports[1].attempts, 1);
}

// A signal to the parent is passed on to each worker once; what they write is kept and nothing
// starts again.
TEST(Workers, ASignalIsPassedOnOnce) {
  const FakeWorker fake(2);
  fake.mark("wait_0");
  fake.mark("wait_1");
  std::thread interrupter([&] {
    for (int i = 0; i < 200 && !(fs::exists(fake.dir / "waiting_0") && fs::exists(fake.dir / "waiting_1")); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::raise(SIGINT);  // run_workers installed the handler: it sets the flag
  });
  const auto reports = fake.run({0, 1});
  interrupter.join();
  EXPECT_EQ(interrupt_signal(), SIGINT);
  clear_interrupt();
  for (const WorkerReport& r : reports) {
    ASSERT_TRUE(r.result.has_value()) << r.failure;
    EXPECT_EQ(r.attempts, 1);
  }
}

// The worker folder a message names after `lead` (kept for the user to look at), removed and
// checked to have existed.
void remove_kept_folder(const std::string& message, const std::string& lead) {
  const auto at = message.find(lead);
  ASSERT_NE(at, std::string::npos) << message;
  const fs::path kept = message.substr(at + lead.size());
  EXPECT_TRUE(fs::is_directory(kept)) << kept;
  EXPECT_NE(kept.filename().string().find("kbench-workers-"), std::string::npos) << kept;
  fs::remove_all(kept);
}

// run_on_devices with the fake worker: the shards merged and written as one result, the lost
// ones named, and every worker refused as bad input.
struct DevicesFixture : FakeWorker {
  fs::path results = dir / "results" / "sweep";
  std::optional<std::string> saved_visible;
  DevicesFixture() : FakeWorker(2) {
    if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) saved_visible = v;
    ::unsetenv("CUDA_VISIBLE_DEVICES");
  }
  ~DevicesFixture() {
    if (saved_visible) ::setenv("CUDA_VISIBLE_DEVICES", saved_visible->c_str(), 1);
  }
  DevicesOutcome run(const std::string& plan = test::kPlanHash) const {
    return run_on_devices({{0, 1}, "run", results, 6, plan, program.string(), {"kbench", "run", "--devices", "0,1"}});
  }
  int written() const {
    int n = 0;
    std::error_code ec;
    for (fs::directory_iterator it(results, ec), end; !ec && it != end; ++it) n += it->path().extension() == ".json";
    return n;
  }
};

TEST(Workers, DevicesMergeTheWorkersShards) {
  const DevicesFixture f;
  f.mark("die_once_0");
  const DevicesOutcome o = f.run();
  EXPECT_TRUE(o.lost.empty()) << o.lost;
  EXPECT_EQ(f.written(), 1);
  const Result r = read_result(o.written);
  EXPECT_EQ(r.records.size(), 12u);
  EXPECT_EQ(r.meta.at("argv"), nlohmann::json({"kbench", "run", "--devices", "0,1"}));
  const auto& workers = r.meta.at("merge").at("workers");
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_EQ(workers[0].at("attempts"), 2);
  EXPECT_EQ(workers[0].at("deaths").size(), 1u);
  EXPECT_EQ(workers[1].at("cuda_visible_devices"), "1");
  EXPECT_EQ(r.extra.at("comparisons").size(), 6u);
}

TEST(Workers, DevicesKeepWhatTheLivingWorkersWrote) {
  const DevicesFixture f;
  f.mark("die_always_1");
  const DevicesOutcome o = f.run();
  EXPECT_NE(o.lost.find("1 of 2 shard(s) missing"), std::string::npos) << o.lost;
  EXPECT_NE(o.lost.find("killed by signal 9"), std::string::npos) << o.lost;
  EXPECT_EQ(f.written(), 1);
  const Result r = read_result(o.written);
  EXPECT_EQ(r.meta.at("merge").at("missing"), nlohmann::json({1}));
  EXPECT_EQ(r.records.size(), test::synthetic_shard(0, 2, 6, test::fixed_git()).records.size());
  remove_kept_folder(o.lost, "logs in ");
}

TEST(Workers, DevicesRefusedByEveryWorkerWriteNothing) {
  const DevicesFixture f;
  f.mark("refuse_0");
  f.mark("refuse_1");
  try {
    f.run();
    ADD_FAILURE() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device visible"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.written(), 0);
}

TEST(Workers, DevicesRefuseWorkersThatRanAnotherPlan) {
  const DevicesFixture f;
  try {
    f.run(std::string(64, 'e'));
    ADD_FAILURE() << "not refused";
  } catch (const Failure& e) {
    EXPECT_NE(std::string(e.what()).find("the workers ran another plan"), std::string::npos) << e.what();
    remove_kept_folder(e.what(), "their results are in ");
  }
  EXPECT_EQ(f.written(), 0);
}

// The real binary on a machine without a GPU: its worker refuses for want of a device, and the
// parent says so in one line, exit 2, having written nothing.
TEST(Workers, TheRunCommandWithoutAGpuEndsInOneLine) {
  const fs::path out = test::fresh_temp_dir();
  const auto r = test::run_kbench("run --op add --shape 1024 --visits 1 --samples 1 --devices 0 --out " + test::shell_quoted(out));
  if (r.exit_code == 0) GTEST_SKIP() << "a GPU is visible: the run ran";
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("kbench: error: worker 0/1 (device 0) refused its input"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(out));
  fs::remove_all(out);
}

}  // namespace
}  // namespace kbench
