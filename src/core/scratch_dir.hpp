// A private folder under the system temp folder for work that must not land in the tree (a
// temporary git index, files rebuilt from history, the workers of run --devices), removed with
// everything in it at scope end unless kept.
#pragma once

#include <filesystem>
#include <string>

namespace kbench {

class ScratchDir {
 public:
  // Creates <temp>/kbench-<purpose>-XXXXXX (mode 0700). Throws UsageError when it cannot.
  explicit ScratchDir(const std::string& purpose);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Leaves the folder in place at scope end (what a user is told to look at: a failed
  // worker's log).
  void keep() { keep_ = true; }
  // Writes `bytes` as path()/relative, creating folders; throws UsageError when it cannot.
  std::filesystem::path write(const std::filesystem::path& relative, const std::string& bytes) const;

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

}  // namespace kbench
