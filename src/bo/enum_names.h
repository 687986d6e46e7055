// The names of enumerations as users type them (CLI options, attack settings, records): one
// table per enumeration serves both directions, so a parser and its printer cannot drift.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace advbo::bo {

/// One entry of a name table: a value and one of its names (a value may have aliases; its
/// first entry gives the name it is printed with).
template <typename E>
struct NamedValue {
  /// The enumerator.
  E value;
  /// Its name as options and records spell it.
  const char* name;
};

/// The value `name` stands for in `table` (aliases accepted). Throws std::invalid_argument
/// "unknown <what> '<name>' (use a, b, c)", listing each value's printed name.
template <typename E, size_t N>
E ParseNamed(const NamedValue<E> (&table)[N], const std::string& name, const std::string& what) {
  for (const auto& e : table)
    if (name == e.name) return e.value;
  std::string names;
  for (size_t i = 0; i < N; ++i) {
    bool first = true;
    for (size_t j = 0; j < i; ++j) first = first && !(table[j].value == table[i].value);
    if (first) names += (names.empty() ? "" : ", ") + std::string(table[i].name);
  }
  throw std::invalid_argument("unknown " + what + " '" + name + "' (use " + names + ")");
}

/// The printed name of `value` (its first entry in `table`); "?" when it has none.
template <typename E, size_t N>
std::string NameOf(const NamedValue<E> (&table)[N], E value) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return "?";
}

}  // namespace advbo::bo
