#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace kbench {
namespace fs = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

// Writes all of `text` to a new file and forces it to disk, so that the rename can only ever
// publish a complete file.
void write_and_sync(const fs::path& file, const std::string& text) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError("cannot create " + file.string() + ": " + errno_text());
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = errno_text();
      ::close(fd);
      throw UsageError("cannot write " + file.string() + ": " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    throw UsageError("cannot write " + file.string() + ": " + errno_text());
}

// renameat2(RENAME_NOREPLACE), or link() where the filesystem lacks it.
bool publish_without_overwrite(const fs::path& from, const fs::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno == EEXIST) return false;
  if (errno != EINVAL && errno != ENOSYS)
    throw UsageError("cannot rename " + from.string() + " to " + to.string() + ": " + errno_text());
  if (::link(from.c_str(), to.c_str()) != 0) {
    if (errno == EEXIST) return false;
    throw UsageError("cannot link " + from.string() + " to " + to.string() + ": " + errno_text());
  }
  ::unlink(from.c_str());
  return true;
}

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // durability of the directory entry is best effort
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

bool write_file_atomically(const fs::path& target, const std::string& text, Overwrite mode) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string temp_name = ".";
  temp_name += target.filename().string();
  temp_name += '-';
  temp_name += std::to_string(::getpid());
  temp_name += '-';
  temp_name += random_hex6();
  temp_name += ".partial";
  const fs::path temp = dir / temp_name;
  std::error_code ec;
  try {
    write_and_sync(temp, text);
    bool published = true;
    if (mode == Overwrite::never) {
      published = publish_without_overwrite(temp, target);
      if (!published) fs::remove(temp, ec);
    } else if (::rename(temp.c_str(), target.c_str()) != 0) {
      throw UsageError("cannot write " + target.string() + ": " + errno_text());
    }
    if (published) sync_directory(dir);
    return published;
  } catch (...) {
    fs::remove(temp, ec);
    throw;
  }
}

}  // namespace kbench
