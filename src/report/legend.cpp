#include "report/legend.hpp"

#include <stdexcept>

#include "report/markdown.hpp"

namespace kbench {

ColumnDefinitions::ColumnDefinitions(std::vector<ColumnDefinition> definitions)
    : definitions_(std::move(definitions)) {}

const ColumnDefinition& ColumnDefinitions::at(const std::string& key) const {
  for (const ColumnDefinition& d : definitions_)
    if (d.key == key) return d;
  throw std::logic_error("the table's column '" + key + "' has no definition for its legend (report/legend.hpp)");
}

std::vector<std::string> ColumnDefinitions::titles(const std::vector<ShownColumn>& columns) {
  std::vector<std::string> out;
  for (const ShownColumn& c : columns) out.push_back(c.title);
  return out;
}

std::string ColumnDefinitions::legend(const std::vector<ShownColumn>& columns) const {
  std::string out;
  for (std::size_t i = 0; i < columns.size();) {
    const ColumnDefinition& d = at(columns[i].definition_key());
    std::string titles = markdown_text(columns[i].title);
    std::size_t j = i + 1;
    for (; j < columns.size() && columns[j].definition_key() == d.key; ++j) titles += ", " + markdown_text(columns[j].title);
    out += "- " + titles + ": " + d.meaning + "\n";
    i = j;
  }
  return out;
}

}  // namespace kbench
