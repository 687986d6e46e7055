// A command's options as data: one row per option -- its flags, the field of the command's
// arguments it fills, its help, its check (range or choices) and its default -- registered in
// table order by AddOptionTable. The table is the one place an option is declared: CLI11 checks
// it while parsing, --help shows it (and so the generated docs/reference/cli.md), and its
// default is the field's value after registration.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace advbo::cli {

/// One option of a command whose parsed arguments are an `Args`: how to register it.
template <class Args>
struct OptionRow {
  /// Adds the option to `cmd`, bound to its field in `args`; returns it.
  std::function<CLI::Option*(CLI::App* cmd, Args* args)> add;
};

namespace option_table_detail {

// The row's modifiers: a check, and a default when one is given (zero or one value).
template <class... D>
CLI::Option* Finish(CLI::Option* o, const std::optional<CLI::Validator>& check, const D&... def) {
  static_assert(sizeof...(D) <= 1, "at most one default");
  if (check) o->check(*check);
  if constexpr (sizeof...(D) == 1) o->default_val(def...);
  return o;
}

}  // namespace option_table_detail

/// A value option filling `Args::*field` (any type CLI11 parses), with an optional check and
/// an optional default (as CLI11's default_val takes it: shown in --help and set before
/// parsing).
template <class Args, class T, class... D>
OptionRow<Args> Value(std::string flags, T Args::*field, std::string help,
                      std::optional<CLI::Validator> check = std::nullopt, D... def) {
  return {[=](CLI::App* cmd, Args* a) {
    return option_table_detail::Finish(cmd->add_option(flags, a->*field, help), check, def...);
  }};
}

/// A value option filling a field of a member (`Args::*outer` then `S::*field`, e.g. the
/// spec's budget).
template <class Args, class S, class T, class... D>
OptionRow<Args> Value(std::string flags, S Args::*outer, T S::*field, std::string help,
                      std::optional<CLI::Validator> check = std::nullopt, D... def) {
  return {[=](CLI::App* cmd, Args* a) {
    return option_table_detail::Finish(cmd->add_option(flags, (a->*outer).*field, help), check,
                                       def...);
  }};
}

/// A flag setting `Args::*field` to true.
template <class Args>
OptionRow<Args> Flag(std::string flags, bool Args::*field, std::string help) {
  return {[=](CLI::App* cmd, Args* a) { return cmd->add_flag(flags, a->*field, help); }};
}

/// A flag setting a field of a member to true.
template <class Args, class S>
OptionRow<Args> Flag(std::string flags, S Args::*outer, bool S::*field, std::string help) {
  return {[=](CLI::App* cmd, Args* a) { return cmd->add_flag(flags, (a->*outer).*field, help); }};
}

/// A row registered by code, for an option whose help or modifiers are computed (the
/// registry's names, an exclusion).
template <class Args>
OptionRow<Args> Custom(std::function<CLI::Option*(CLI::App* cmd, Args* args)> add) {
  return {std::move(add)};
}

/// Registers every row of `rows` on `cmd`, in order, bound to `args` (which must outlive the
/// parse).
template <class Args, class Rows>
void AddOptionTable(CLI::App* cmd, Args* args, const Rows& rows) {
  for (const auto& row : rows) row.add(cmd, args);
}

}  // namespace advbo::cli
