// The advbo command-line tool: one subcommand per file (attack_command.cc, ...).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "bo/allocator.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  advbo::bo::ConfigureAllocatorForLargeMatrices();
  CLI::App app{
      "advbo - black-box adversarial attacks and defenses driven by Bayesian optimization.\n"
      "Every image the model evaluates is one query; budgets and the L_inf threat model are\n"
      "enforced by the query oracle."};
  app.require_subcommand(1);
  auto run_attack = advbo::cli::RegisterAttackCommand(app);
  auto run_bo = advbo::cli::RegisterBoCommand(app);
  auto run_bench = advbo::cli::RegisterBenchCommand(app);
  auto run_game = advbo::cli::RegisterGameCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (int rc = run_attack()) return rc;
    if (int rc = run_bo()) return rc;
    if (int rc = run_bench()) return rc;
    return run_game();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "advbo: error: %s\n", e.what());
    return 1;
  }
}
