// Reproduction driver of BO-BOS' hyperparameter-tuning study (Dai 2021 thesis, Sec. 4.5.1,
// Fig. 4.1, App. A.4.1) for tools/bench/bench_bobos.sh: logistic regression on MNIST (batch size
// 20..500, L2 1e-6..1, learning rate 1e-3..0.1, 80/20 split), N = 50 epochs, an epoch budget
// (1,500), paired seeds. Methods: bo-bos:GAMMA (K_{1,t} = K_{1,t-1} / GAMMA), gp-ucb (the same
// loop without early stopping: same GP, beta, initial points) and hyperband (eta = 3, R = 80).
// One JSON line per (seed, method): every trained configuration with its epochs, error,
// early-stop flag, epochs_total and best_error.
//
// Usage: bench_bobos --task mnist-lr --mnist-dir DIR --seeds 10 --budget 1500 --out runs.jsonl
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/bo_bos/bo_bos.h"
#include "algorithms/hpo/hpo_task.h"
#include "algorithms/hyperband/hyperband.h"
#include "bench_util.h"
#include "bo/clock.h"

namespace {
namespace bo = advbo::bo;
namespace alg = advbo::algorithms;
namespace hpo = advbo::hpo;

// The task's search space (log10 units) is the box the tuners see.
alg::CurveObjective CurveOf(const hpo::HpoTask& task) {
  return [&task](const Eigen::VectorXd& z, int max_epochs, const alg::EpochReport& report) {
    task.Evaluate(task.ToNatural(z), max_epochs, report);
  };
}

nlohmann::json RunOne(const hpo::HpoTask& task, const std::string& method, int seed, int budget,
                      int num_paths) {
  bo::Rng rng(bo::DeriveSeed(20260, seed));
  nlohmann::json rec{{"task", task.name()}, {"method", method}, {"seed", seed}, {"budget", budget}};
  nlohmann::json evals = nlohmann::json::array();
  const auto t0 = bo::Clock::now();
  const Eigen::VectorXd lb = task.SearchLower(), ub = task.SearchUpper();
  auto natural = [&](const Eigen::VectorXd& z) {
    const Eigen::VectorXd x = task.ToNatural(z);
    return std::vector<double>(x.data(), x.data() + x.size());
  };
  if (method == "hyperband") {
    alg::HyperbandOptions o;
    o.epoch_budget = budget;
    const auto res = alg::RunHyperband(CurveOf(task), lb, ub, o, rng);
    for (const auto& r : res.records)
      evals.push_back({{"x", natural(r.x)},
                       {"epochs", r.epochs},
                       {"charged", r.epochs_charged},
                       {"error", r.error},
                       {"bracket", r.bracket},
                       {"rung", r.rung},
                       {"epochs_total", r.epochs_total},
                       {"best_error", r.best_error}});
    rec["best_error"] = res.best_error;
    rec["epochs_used"] = res.epochs_used;
  } else {
    alg::BoBosOptions o;
    o.epoch_budget = budget;
    o.num_paths = num_paths;
    if (method == "gp-ucb") {
      o.early_stopping = false;
    } else if (method.rfind("bo-bos:", 0) == 0) {
      o.gamma = std::stod(method.substr(7));
    } else {
      throw std::invalid_argument("unknown method " + method);
    }
    rec["gamma"] = o.early_stopping ? o.gamma : 0.0;
    double seconds_bo = 0, seconds_train = 0;
    const auto res = alg::RunBoBos(CurveOf(task), lb, ub, o, rng);
    for (const auto& r : res.records) {
      evals.push_back({{"x", natural(r.x)},
                       {"phase", r.phase},
                       {"epochs", r.epochs},
                       {"error", r.error},
                       {"early_stopped", r.early_stopped},
                       {"final_curve_error", r.curve.back()},
                       {"k1", r.k1},
                       {"prior_success", r.prior_success},
                       {"epochs_total", r.epochs_total},
                       {"best_error", r.best_error}});
      seconds_bo += r.seconds_bo;
      seconds_train += r.seconds_train;
    }
    rec["best_error"] = res.best_error;
    rec["epochs_used"] = res.epochs_used;
    rec["seconds_bo"] = seconds_bo;
    rec["seconds_train"] = seconds_train;
    rec["kernel"] = res.kernel;
  }
  rec["evaluations"] = evals;
  rec["seconds"] = bo::SecondsSince(t0);
  return rec;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"BO-BOS / GP-UCB / Hyperband on an HPO task (thesis Fig. 4.1)"};
  std::string task_name = "mnist-lr", out, methods = "bo-bos:0.95,gp-ucb,hyperband";
  hpo::TaskOptions topt;
  int seeds = 10, budget = 1500, num_paths = 100000;
  app.add_option("--task", task_name, "HPO task")->capture_default_str();
  app.add_option("--mnist-dir", topt.mnist_dir, "MNIST IDX folder")->capture_default_str();
  app.add_option("--cifar10-dir", topt.cifar10_dir, "CIFAR-10 folder")->capture_default_str();
  app.add_option("--examples", topt.examples, "examples of the pool (0 = all)")
      ->capture_default_str();
  app.add_option("--methods", methods, "comma-separated methods")->capture_default_str();
  app.add_option("--seeds", seeds, "paired seeds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--budget", budget, "epoch budget")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--paths", num_paths, "BOS forward-simulation paths")->capture_default_str();
  app.add_option("--out", out, "JSONL output")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    const auto task = hpo::MakeTask(task_name, topt);
    std::fprintf(stderr, "%s\n", task->Describe().c_str());
    std::vector<std::string> seed_names;
    for (int s = 0; s < seeds; ++s) seed_names.push_back(std::to_string(s));
    advbo::tools::RunGridToJsonl(seed_names, advbo::tools::SplitList(methods), 1, out,
                                 [&](const std::string& seed, const std::string& method, int) {
                                   return RunOne(*task, method, std::stoi(seed), budget, num_paths);
                                 });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_bobos: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
