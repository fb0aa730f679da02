// Markdown helpers the report's parts share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/text.hpp"

namespace kbench {

// `text` from a result file (a name, a path, a device) as markdown text that stays what it is:
// printable on one line (core/text.hpp printable, so no newline ends a row and no escape
// sequence reaches a terminal), with '|' (which would end a table cell), '\' (which would
// escape what follows) and '<' (which would open HTML) escaped. Result files are data, not
// markdown; the report's own cells hold none of the three.
inline std::string markdown_text(std::string_view text) {
  std::string out;
  for (char c : printable(text, 200)) {
    if (c == '|' || c == '\\') out += '\\';
    if (c == '<') {
      out += "&lt;";
      continue;
    }
    out += c;
  }
  return out;
}

// "| a | b |\n", each cell through markdown_text.
inline std::string markdown_row(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& c : cells) line += " " + markdown_text(c) + " |";
  return line + "\n";
}

}  // namespace kbench
