// Markdown helpers the report's parts share.
#pragma once

#include <string>
#include <vector>

namespace kbench {

// "| a | b |\n"
inline std::string markdown_row(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& c : cells) line += " " + c + " |";
  return line + "\n";
}

}  // namespace kbench
