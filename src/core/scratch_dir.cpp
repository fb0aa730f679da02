#include "core/scratch_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/errors.hpp"

namespace kbench {
namespace fs = std::filesystem;

ScratchDir::ScratchDir(const std::string& purpose) {
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  if (ec) throw UsageError("no temporary folder: " + ec.message());
  std::string name = (base / ("kbench-" + purpose + "-XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr)
    throw UsageError("cannot create a temporary folder in " + base.string() + ": " +
                     std::strerror(errno));
  path_ = name;
}

ScratchDir::~ScratchDir() {
  if (keep_) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

fs::path ScratchDir::write(const fs::path& relative, const std::string& bytes) const {
  const fs::path file = path_ / relative;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (ec || !out.flush()) throw UsageError("cannot write " + file.string());
  return file;
}

}  // namespace kbench
