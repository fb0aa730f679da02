// What each column of a markdown table is, kept beside the columns themselves: a table names the
// definition of every column it shows, and its legend (one line per column under the table) is
// made from the same definitions, so a column cannot be shown without saying what it is. A
// column whose definition is missing throws when the table is built, which the CPU tests meet.
// Used by `kbench report` (report.cpp) and the table `kbench run` prints (run_table.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kbench {

// One kind of column: `key` is its title, or for columns made per name (a variant, a baseline)
// a pattern such as "<variant>" or "best vs <baseline>"; `meaning` says what the cell is, its
// unit and how it is computed.
struct ColumnDefinition {
  std::string key;
  std::string meaning;
};

// A column as a table shows it: its title in the header, and the key of its definition (the
// title itself where empty).
struct ShownColumn {
  ShownColumn(std::string title, std::string key = "") : title(std::move(title)), key(std::move(key)) {}
  std::string title;
  std::string key;
  const std::string& definition_key() const { return key.empty() ? title : key; }
};

class ColumnDefinitions {
 public:
  explicit ColumnDefinitions(std::vector<ColumnDefinition> definitions);
  // The definition of `key`; std::logic_error (naming the key) where there is none: a column
  // added to a table without a definition.
  const ColumnDefinition& at(const std::string& key) const;
  // Every column's titles, as a markdown table's header row cells.
  static std::vector<std::string> titles(const std::vector<ShownColumn>& columns);
  // The legend of `columns` as shown, in their order: "- title: meaning" a line, one line for
  // columns next to each other of one definition ("- auto, block: ..."). Throws as `at` does.
  std::string legend(const std::vector<ShownColumn>& columns) const;

 private:
  std::vector<ColumnDefinition> definitions_;
};

}  // namespace kbench
