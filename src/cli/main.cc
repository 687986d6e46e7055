// The advbo command-line tool: one subcommand per file (attack_command.cc, ...).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "bo/allocator.h"
#include "cli/commands.h"

namespace {

// Levenshtein distance (for "did you mean").
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// "" when argv[1] is an option or a known subcommand, else the error message.
std::string UnknownCommand(int argc, char** argv, const CLI::App& app) {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string word = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  if (std::find(names.begin(), names.end(), word) != names.end()) return "";
  std::string list, best;
  size_t best_d = 3;  // suggest only close matches
  for (const auto& n : names) {
    list += (list.empty() ? "" : ", ") + n;
    const size_t d = EditDistance(word, n);
    if (d < best_d) best_d = d, best = n;
  }
  return "unknown command '" + word + "' (commands: " + list + ")" +
         (best.empty() ? "" : "; did you mean '" + best + "'?");
}

}  // namespace

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
  auto run_macro = advbo::cli::RegisterMacroCommand(app);
  auto run_fbo = advbo::cli::RegisterFboCommand(app);
  auto run_serve = advbo::cli::RegisterServeCommand(app);
  if (const std::string bad = UnknownCommand(argc, argv, app); !bad.empty()) {
    std::fprintf(stderr, "advbo: error: %s\nRun advbo --help for more information.\n", bad.c_str());
    return 1;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Bad arguments: one error line in advbo's format, exit status 1, nothing written.
    std::fprintf(stderr, "advbo: error: %s\nRun with --help for more information.\n", e.what());
    return 1;
  }
  try {
    if (int rc = run_attack()) return rc;
    if (int rc = run_bo()) return rc;
    if (int rc = run_bench()) return rc;
    if (int rc = run_game()) return rc;
    if (int rc = run_macro()) return rc;
    if (int rc = run_fbo()) return rc;
    return run_serve();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "advbo: error: %s\n", e.what());
    return 1;
  }
}
