#include "record/sha256.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/errors.hpp"

namespace kbench {

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("OpenSSL EVP_Digest(sha256) failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xf]);
  }
  return hex;
}

std::string normalize_line_endings(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      out.push_back(text[i]);
      continue;
    }
    out.push_back('\n');
    if (i + 1 < text.size() && text[i + 1] == '\n') ++i;  // CRLF: one line break, not two
  }
  return out;
}

std::string hash_source_file(const std::filesystem::path& file) {
  std::error_code ec;
  // A directory opens as a stream on Linux and reads as empty: reject it by name instead.
  if (!std::filesystem::is_regular_file(file, ec))
    throw UsageError("cannot read " + file.string() + ": not a regular file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError("cannot read " + file.string());
  std::string content{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw UsageError("cannot read " + file.string());
  return sha256_hex(normalize_line_endings(content));
}

}  // namespace kbench
