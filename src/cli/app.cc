#include "cli/app.h"

#include <algorithm>

#include "cli/commands.h"
#include "cli/validators.h"

namespace advbo::cli {
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

}  // namespace

Cli::Cli()
    : app_(
          "advbo - black-box adversarial attacks and defenses driven by Bayesian "
          "optimization.\nEvery image the model evaluates is one query; budgets and the threat "
          "model (an L_inf or L2\nball, score or label feedback, 8-bit or float queries) are "
          "enforced by the query oracle.") {
  app_.require_subcommand(1);
  app_.set_version_flag("--version", std::string("advbo ") + ADVBO_VERSION);
  runners_ = {RegisterAttackCommand(app_),   RegisterBoCommand(app_),   RegisterBenchCommand(app_),
              RegisterEvaluateCommand(app_), RegisterGameCommand(app_), RegisterMacroCommand(app_),
              RegisterFboCommand(app_),      RegisterServeCommand(app_)};
  GuardEveryValue(app_);
}

std::string Cli::UnknownCommand(int argc, char** argv) const {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string word = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app_.get_subcommands([](const CLI::App*) { return true; }))
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

int Cli::Run() const {
  for (const auto& run : runners_)
    if (int rc = run()) return rc;
  return 0;
}

}  // namespace advbo::cli
