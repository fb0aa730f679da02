// The tree the verify tests start from: a git repository with two sources at one commit and a
// result measuring them (add at 12.345 us and 1234.5 GB/s), written as kbench writes results.
#pragma once

#include <filesystem>
#include <string>

#include "cpu/run_command.hpp"
#include "git_fixture.hpp"
#include "record/result.hpp"
#include "record/sha256.hpp"
#include "record/verify.hpp"

namespace kbench::test {

inline const char* kKernel = "__global__ void add() {}\n";
inline const char* kHarness = "// timer\n";

// A result measuring add with these contents of kernels/add/add.cu and src/harness/timer.cpp.
inline Result add_result(const std::string& kernel, const std::string& harness,
                         const nlohmann::json& git) {
  Result r;
  r.experiment = "sweep";
  r.meta = {{"git", git}};
  r.manifest = {{"algorithm", "sha256"},
                {"files",
                 {{"kernels/add/add.cu", sha256_hex(kernel)},
                  {"src/harness/timer.cpp", sha256_hex(harness)},
                  {"src/unmeasured.cpp", "not checked: not measured"}}},
                {"measured", {{"add", {"kernels/add/add.cu", "src/harness/timer.cpp"}}}}};
  Record rec;
  rec.op = "add";
  rec.variant = "vec16";
  rec.dtype = "float32";
  rec.shape = {1024, 1024};
  rec.cache = "cold";
  rec.timer = "events";
  rec.samples_us = {12.345};
  rec.median_us = rec.q1_us = rec.q3_us = rec.min_us = 12.345;
  rec.gbps = 1234.5;
  r.records = {rec};
  r.extra = {{"timer_floor", {{{"cache", "cold"}, {"timer", "events"}, {"median_us", 2.976}}}}};
  return r;
}

inline std::filesystem::path write_result_in(const std::filesystem::path& root, const Result& r) {
  return write_result(r, root / "results" / r.experiment);
}

inline std::string all_problems(const VerifyReport& report) {
  std::string text;
  for (const auto& p : report.problems) text += format_problem(p) + "\n";
  return text;
}

struct VerifyFixture {
  GitFixture tree;
  std::string commit;  // the commit the sources are at
  Result result;       // what result_file holds
  std::filesystem::path result_file;

  VerifyFixture() {
    tree.write("CMakeLists.txt", "project(x)\n");
    tree.write("kernels/add/add.cu", kKernel);
    tree.write("src/harness/timer.cpp", kHarness);
    commit = tree.commit("sources");
    rewrite_result(add_result(kKernel, kHarness, git_clean()));
  }

  nlohmann::json git_clean() const {
    return {{"commit", commit}, {"dirty", false}, {"source", "git"}};
  }
  VerifyReport verify() const { return verify_tree({tree.path(), {}}); }
  std::string relative_result() const {
    return result_file.lexically_relative(tree.path()).generic_string();
  }

  // Replaces the result file with `r`, written afresh (new name, fresh digest).
  void rewrite_result(const Result& r) {
    if (!result_file.empty()) std::filesystem::remove(result_file);
    result_file = write_result_in(tree.path(), r);
    result = r;
  }
  nlohmann::json result_json() const { return nlohmann::json::parse(read_file(result_file)); }
  // Overwrites the result file with `j` as it is: an edit after the run.
  void write_result_json(const nlohmann::json& j) const {
    tree.write(relative_result(), j.dump(1));
  }

  // As `git mv results/sweep/<file> archive/sweep/<file>` when its config is re-measured.
  void archive() {
    const auto dest = tree.path() / "archive" / "sweep" / result_file.filename();
    std::filesystem::create_directories(dest.parent_path());
    std::filesystem::rename(result_file, dest);
    result_file = dest;
  }
  void drop_history() const { std::filesystem::remove_all(tree.path() / ".git"); }
};

}  // namespace kbench::test
