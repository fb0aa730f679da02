// scripts/setup.sh checks for tools and headers, not package names, and installs nothing when
// nothing is missing: run with fakes of apt-get, sudo and pip first on PATH that only record
// that they were called (the offline GPU machine, whose ninja came from pip, stopped at apt-get).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cpu/run_command.hpp"
#include "record/manifest.hpp"

namespace kbench {
namespace {

namespace fs = std::filesystem;

const fs::path kSetup = source_root() / "scripts" / "setup.sh";
// One line per need, in the script's order.
const char* const kNeeds[] = {"cmake>=3.28", "ninja", "g++", "python3", "nvcc", "CLI11 (CLI/CLI.hpp)",
                              "nlohmann/json (nlohmann/json.hpp)", "valijson (valijson/validator.hpp)",
                              "spdlog (spdlog/spdlog.h)", "Eigen (Eigen/Core)", "GoogleTest (gtest/gtest.h)",
                              "OpenSSL (openssl/sha.h)", "clang++ -fsanitize=fuzzer"};

struct FakeInstallers {
  fs::path dir = test::fresh_temp_dir();
  fs::path calls = dir / "calls";
  FakeInstallers() {
    for (const char* tool : {"apt-get", "sudo", "pip", "pip3"}) add(tool, "echo " + std::string(tool) + " \"$@\" >>" +
                                                                           test::shell_quoted(calls) + "\nexit 1\n");
  }
  ~FakeInstallers() { fs::remove_all(dir); }
  void add(const std::string& tool, const std::string& body) const {
    std::ofstream(dir / tool) << "#!/bin/bash\n" << body;
    fs::permissions(dir / tool, fs::perms::owner_all);
  }
  test::CommandResult run(const std::string& args) const {
    return test::run_command("PATH=" + test::shell_quoted(dir) + ":\"$PATH\" bash " + test::shell_quoted(kSetup) + " " + args);
  }
  std::string called() const { return fs::exists(calls) ? test::read_file(calls) : ""; }
};

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Every need gets one line, present or missing, and the exit status says whether any is missing.
TEST(SetupScript, CheckReportsEveryNeedAndInstallsNothing) {
  const FakeInstallers fakes;
  const test::CommandResult o = fakes.run("--check");
  int missing = 0;
  for (const char* need : kNeeds) {
    const int present = count(o.out, std::string("setup: present  ") + need + "\n");
    const int absent = count(o.out, std::string("setup: missing  ") + need + " (");
    EXPECT_EQ(present + absent, 1) << need << "\n" << o.out;
    missing += absent;
  }
  EXPECT_EQ(o.exit_code, missing ? 1 : 0) << o.out << o.err;
  EXPECT_EQ(fakes.called(), "");
}

// A CMake older than 3.28 first on PATH is reported as missing, with where it would come from.
TEST(SetupScript, CheckFindsAnOldCmake) {
  const FakeInstallers fakes;
  fakes.add("cmake", "echo 'cmake version 3.25.1'\n");
  const test::CommandResult o = fakes.run("--check");
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("setup: missing  cmake>=3.28 (pip)\n"), std::string::npos) << o.out;
  EXPECT_EQ(fakes.called(), "");
}

// With everything present, the full run (not only --check) installs nothing: no apt-get, so no
// network is needed.
TEST(SetupScript, NothingMissingMeansNoInstaller) {
  const FakeInstallers fakes;
  if (fakes.run("--check").exit_code != 0) GTEST_SKIP() << "something is missing here; setup.sh would install it";
  const test::CommandResult o = fakes.run("");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("setup: ok ("), std::string::npos) << o.out;
  EXPECT_EQ(fakes.called(), "");
}

TEST(SetupScript, UnknownArgument) {
  const FakeInstallers fakes;
  const test::CommandResult o = fakes.run("--frobnicate");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(test::line_count(o.err), 1) << o.err;
  EXPECT_EQ(o.out, "");
}

}  // namespace
}  // namespace kbench
