// --devices without a GPU (cli/workers.hpp, cli/devices_run.hpp): the worker's command line and
// visible device, and the parent's handling of workers, driven with a fake worker (a shell
// script that writes a canned shard result, dies, or refuses) in place of kbench.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
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
  // --isolate and the step deadline are the parent's: a worker given them would refuse --shard.
  const std::vector<std::string> isolated = {"kbench", "run", "--isolate", "--op", "add", "--unit-timeout", "30",
                                             "--device", "3", "--unit-timeout=9", "--isolate=true"};
  EXPECT_EQ(worker_argv(isolated, "k", {0, 1}, "o"),
            std::vector<std::string>({"k", "run", "--op", "add", "--device", "0", "--shard", "0/1", "--out", "o"}));
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
// nothing, or waits for SIGINT and then writes its result (exit 130) or does not ("quit_k"). As kbench does in a
// worker (harness/worker_steps.hpp), it reports its steps and leaves out the variants the parent
// excludes: "faults_k" lists variants that end the process as an illegal address does (a CUDA
// error line, exit 1), "hang_k" one whose step never ends (the parent's deadline must kill it).
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
step() { echo '{"case":"add float32 1024","dtype":"float32","op":"add","phase":"'$1'","shape":[1024],"variant":"'$2'"}' >>"$KBENCH_WORKER_STEPS"; }
excluded() { grep -q '"variant":"'$1'"' "$KBENCH_WORKER_EXCLUDE"; }
cat "$KBENCH_WORKER_EXCLUDE" >>"$c/excluded_$k"; echo "--" >>"$c/excluded_$k"
step check good
for v in $(cat "$c/faults_$k" 2>/dev/null); do
  excluded $v && continue
  step check $v
  if [ "${v#abort}" != "$v" ]; then  # aborted while unwinding: std::terminate's lines, SIGABRT
    printf "terminate called after throwing an instance of 'kbench::CudaError'\n  what():  prepare.cpp:270: cudaFree failed: cudaErrorIllegalAddress (an illegal memory access was encountered)\n" >&2
    kill -6 $$
  fi
  echo 'kbench: internal error: prepare.cpp:270: cudaStreamSynchronize(stream) failed: cudaErrorIllegalAddress (an illegal memory access was encountered)' >&2
  exit 1
done
if [ -e "$c/hang_$k" ] && ! excluded spin; then step visit spin; while true; do sleep 0.05; done; fi
echo '{"phase":"record"}' >>"$KBENCH_WORKER_STEPS"
if [ -e "$c/quit_$k" ]; then  # as kbench interrupted in preparation: exit 130, nothing written
  trap 'exit 130' INT
  touch "$c/waiting_$k"
  while true; do sleep 0.05; done
fi
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

  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
  std::vector<WorkerReport> run(const std::vector<int>& devices, const WorkerLimits& limits = {}) const {
    std::vector<WorkerJob> jobs;
    for (std::size_t k = 0; k < devices.size(); ++k)
      jobs.push_back({devices[k], "gpu" + std::to_string(devices[k]), {static_cast<int>(k), static_cast<int>(devices.size())}});
    const fs::path work = dir / "work";
    fs::create_directories(work);
    return run_workers(jobs, [&](const WorkerJob& job, const fs::path& out) {
      return worker_argv({"kbench", "run", "--op", "add"}, program.string(), job.shard, out);
    }, work, limits);
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

// A variant that ends its worker is recorded with the step it was on and the worker's error,
// and the worker starts again without it, until an attempt gets through; the other worker is
// untouched.
TEST(Workers, AVariantThatFaultsIsRecordedAndLeftOutOfTheNextAttempt) {
  const FakeWorker fake(2);
  fake.write("faults_0", "bad1 abort2");
  const auto reports = fake.run({0, 1});
  const WorkerReport& r = reports[0];
  ASSERT_TRUE(r.result.has_value()) << r.failure;
  EXPECT_EQ(r.attempts, 3);
  ASSERT_EQ(r.faults.size(), 2u);
  EXPECT_EQ(r.faults[0].step.variant, "bad1");
  EXPECT_EQ(r.faults[1].step.variant, "abort2");
  EXPECT_EQ(r.faults[1].attempt, 2);
  for (const WorkerFault& f : r.faults) {
    EXPECT_EQ(f.step.phase, "check");
    EXPECT_EQ(f.step.case_label, "add float32 1024");
    EXPECT_EQ(f.step.shape, Shape({1024}));
    EXPECT_NE(f.error.find("an illegal memory access was encountered"), std::string::npos) << f.error;
    EXPECT_EQ(f.error.find("kbench: "), std::string::npos) << f.error;  // the line, not the program's name
  }
  EXPECT_NE(r.faults[0].error.find("(exit status 1 with 0 result files"), std::string::npos) << r.faults[0].error;
  EXPECT_NE(r.faults[1].error.find("cudaFree failed"), std::string::npos) << r.faults[1].error;  // what() said
  EXPECT_NE(r.faults[1].error.find("killed by signal 6"), std::string::npos) << r.faults[1].error;
  EXPECT_EQ(r.deaths.size(), 2u);
  // Each attempt was told what faulted before it: nothing, bad1, then both.
  const std::string seen = test::read_file(fake.dir / "excluded_0");
  const auto first = seen.find("--"), second = seen.find("--", first + 2);
  EXPECT_EQ(seen.substr(0, first), "");
  EXPECT_NE(seen.substr(first, second - first).find("\"variant\":\"bad1\""), std::string::npos) << seen;
  EXPECT_EQ(seen.substr(first, second - first).find("abort2"), std::string::npos) << seen;
  EXPECT_NE(seen.substr(second).find("bad1"), std::string::npos) << seen;
  EXPECT_NE(seen.substr(second).find("abort2"), std::string::npos) << seen;
  EXPECT_EQ(reports[1].attempts, 1);
  EXPECT_TRUE(reports[1].faults.empty());
}

// A worker whose step never ends is killed at the deadline and its variant recorded as past it.
TEST(Workers, AWorkerPastTheStepDeadlineIsKilledAndItsVariantRecorded) {
  const FakeWorker fake(1);
  fake.mark("hang_0");
  const auto began = std::chrono::steady_clock::now();
  const auto reports = fake.run({0}, {0.5, kMaxFaultsPerWorker});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  const WorkerReport& r = reports[0];
  ASSERT_TRUE(r.result.has_value()) << r.failure;
  EXPECT_EQ(r.attempts, 2);
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].step.variant, "spin");
  EXPECT_EQ(r.faults[0].step.phase, "visit");
  EXPECT_NE(r.faults[0].error.find("ran past the 0.5 s step deadline"), std::string::npos) << r.faults[0].error;
  EXPECT_LT(seconds, 20.0);  // killed at about 0.5 s, not left to spin
}

// A worker is not started a 21st time: its shard is lost, said so, not retried for ever.
TEST(Workers, AWorkerThatFaultsMoreThanItsLimitIsGivenUp) {
  const FakeWorker fake(1);
  fake.write("faults_0", "a b c");
  const auto reports = fake.run({0}, {kDefaultStepTimeoutS, 2});
  const WorkerReport& r = reports[0];
  EXPECT_FALSE(r.result.has_value());
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(r.faults.size(), 3u);
  EXPECT_NE(r.failure.find("faulted 3 times, more than the 2 a worker may"), std::string::npos) << r.failure;
}

TEST(Workers, ParsesTheStepDeadline) {
  EXPECT_EQ(parse_step_timeout("300"), 300.0);
  EXPECT_EQ(parse_step_timeout("2.5"), 2.5);
  EXPECT_EQ(parse_step_timeout("86400"), 86400.0);
  int refused = 0;
  for (const char* bad : {"", "0", "0.0", "-1", "abc", "nan", "inf", "1e3", "86401", " 5", "5s", "+5", "0x10", "1.2.3"}) {
    EXPECT_THROW(parse_step_timeout(bad), UsageError) << "'" << bad << "'";
    ++refused;
  }
  EXPECT_EQ(refused, 14);
}

// The steps protocol itself: a line round-trips, a line cut short is not a step, the last whole
// step is the one the parent blames, and excluded pairs are read back.
TEST(WorkerSteps, LinesRoundTripAndACutLineIsNotAStep) {
  const WorkerStep s{"visit", "add float16 4096", "add", "float16", {4096}, "vec16"};
  const auto back = parse_step_line(step_line(s));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->phase, "visit");
  EXPECT_EQ(back->case_label, "add float16 4096");
  EXPECT_EQ(back->shape, Shape({4096}));
  EXPECT_EQ(back->variant, "vec16");
  EXPECT_TRUE(back->names_variant());
  const auto host = parse_step_line(step_line({"warm-up", "", "", "", {}, ""}));
  ASSERT_TRUE(host.has_value());
  EXPECT_FALSE(host->names_variant());
  const std::string line = step_line(s);
  EXPECT_FALSE(parse_step_line(line.substr(0, line.size() - 3)).has_value());
  EXPECT_FALSE(parse_step_line("[1]").has_value());

  const fs::path dir = test::fresh_temp_dir();
  std::ofstream(dir / "steps") << step_line({"check", "add float32 8", "add", "float32", {8}, "scalar"}) << "\n"
                               << line << "\n" << line.substr(0, 10);
  const auto last = last_step(dir / "steps");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->variant, "vec16");
  EXPECT_FALSE(last_step(dir / "none").has_value());
  write_excluded(dir / "exclude", {s, {"check", "add float32 8", "add", "float32", {8}, "scalar"}});
  EXPECT_EQ(read_excluded(dir / "exclude"),
            ExcludedVariants({{"add float16 4096", "vec16"}, {"add float32 8", "scalar"}}));
  fs::remove_all(dir);
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

// The faults of every worker go into the merged result (extra.faults), which stays a valid v1
// result, and the outcome says so in one line.
TEST(Workers, DevicesRecordTheFaultsInTheMergedResult) {
  const DevicesFixture f;
  f.write("faults_1", "bad");
  const DevicesOutcome o = f.run();
  EXPECT_TRUE(o.lost.empty()) << o.lost;
  EXPECT_NE(o.faulted.find("1 variant(s) faulted"), std::string::npos) << o.faulted;
  EXPECT_NE(o.faulted.find("bad on add float32 1024"), std::string::npos) << o.faulted;
  const Result r = read_result(o.written);  // checked against result.schema.json
  EXPECT_EQ(r.records.size(), 12u);
  ASSERT_EQ(r.extra.at("faults").size(), 1u);
  const nlohmann::json& fault = r.extra.at("faults")[0];
  EXPECT_EQ(fault.at("op"), "add");
  EXPECT_EQ(fault.at("variant"), "bad");
  EXPECT_EQ(fault.at("dtype"), "float32");
  EXPECT_EQ(fault.at("shape"), nlohmann::json({1024}));
  EXPECT_EQ(fault.at("phase"), "check");
  EXPECT_EQ(fault.at("shard"), 1);
  EXPECT_NE(fault.at("error").get<std::string>().find("illegal memory access"), std::string::npos);
  EXPECT_EQ(r.meta.at("merge").at("workers")[1].at("faults"), 1);
  EXPECT_EQ(r.meta.at("merge").at("workers")[1].at("attempts"), 2);
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

// SIGINT before any worker measured (each in its preparation, which writes nothing): the run
// ends as interrupted (exit 130 in main), not as a failure, and writes nothing.
TEST(Workers, DevicesInterruptedBeforeAnyResultEndInterruptedAndWriteNothing) {
  const DevicesFixture f;
  f.mark("quit_0");
  f.mark("quit_1");
  std::thread interrupter([&] {
    for (int i = 0; i < 200 && !(fs::exists(f.dir / "waiting_0") && fs::exists(f.dir / "waiting_1")); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::raise(SIGINT);
  });
  try {
    f.run();
    ADD_FAILURE() << "not interrupted";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.signal(), SIGINT);
    EXPECT_NE(std::string(e.what()).find("nothing written"), std::string::npos) << e.what();
  }
  interrupter.join();
  clear_interrupt();
  EXPECT_EQ(f.written(), 0);
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
// parent ends on one line saying so (after its log of the worker, on stderr too), exit 2, having
// written nothing.
TEST(Workers, TheRunCommandWithoutAGpuEndsInOneLine) {
  const fs::path out = test::fresh_temp_dir();
  const auto r = test::run_kbench("run --op add --shape 1024 --visits 1 --samples 1 --devices 0 --out " + test::shell_quoted(out));
  if (r.exit_code == 0) GTEST_SKIP() << "a GPU is visible: the run ran";
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ASSERT_GE(r.err.size(), 2u);
  const std::size_t last_line = r.err.rfind('\n', r.err.size() - 2) + 1;  // npos + 1: the only line
  EXPECT_EQ(r.err.find("kbench: error: worker 0/1 (device 0) refused its input"), last_line) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(fs::is_empty(out));
  fs::remove_all(out);
}

}  // namespace
}  // namespace kbench
