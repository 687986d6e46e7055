// Subcommand registration for the advbo binary.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace advbo::cli {

/// Adds `advbo attack` to app; the returned function runs it after parsing (returns the
/// process exit code; 0 when the subcommand was not selected).
std::function<int()> RegisterAttackCommand(CLI::App& app);

/// Adds `advbo bo` (Bayesian optimisation of a test function or an external command).
std::function<int()> RegisterBoCommand(CLI::App& app);

/// Adds `advbo bench` (several attacks side by side; shards, resume, merge).
std::function<int()> RegisterBenchCommand(CLI::App& app);

/// Adds `advbo evaluate` (worst-case robust accuracy over an attack ensemble).
std::function<int()> RegisterEvaluateCommand(CLI::App& app);

/// Adds `advbo game` (repeated games between R2-B2 agents).
std::function<int()> RegisterGameCommand(CLI::App& app);

/// Adds `advbo macro` (nonmyopic BO with macro-actions on a spatial field).
std::function<int()> RegisterMacroCommand(CLI::App& app);

/// Adds `advbo fbo` (federated BO: TS, FTS, DP-FTS-DE with N agents in lock-step).
std::function<int()> RegisterFboCommand(CLI::App& app);

/// Adds `advbo serve` (a model and optional defense behind an HTTP API).
std::function<int()> RegisterServeCommand(CLI::App& app);

}  // namespace advbo::cli
