#include "cli/bo_algorithms.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

#include "algorithms/hybrid_batch/hybrid_batch.h"
#include "algorithms/uhe_bo/uhe_bo.h"
#include "bo/session.h"

namespace advbo::cli {
namespace {

bool IsBatch(const std::string& algo) { return algo == "hybrid-ei" || algo == "cl-batch"; }

algorithms::HybridBatchOptions HybridOptions(const AlgoArgs& a, double known_optimum) {
  algorithms::HybridBatchOptions h;
  h.batch_max = a.batch_max;
  h.epsilon = a.algo == "cl-batch" ? std::numeric_limits<double>::infinity() : a.hybrid_eps;
  h.fantasy = algorithms::ParseFantasy(a.fantasy);
  h.zeta = a.zeta;
  h.known_optimum = known_optimum;
  return h;
}

}  // namespace

std::vector<std::string> AlgorithmNames() {
  return {"standard", "hybrid-ei", "cl-batch", "uhe-bo"};
}

void CheckAlgorithm(const AlgoArgs& a, const bo::BoLoopOptions& opt, double known_optimum) {
  if (a.algo == "standard") return;
  if (a.algo == "uhe-bo") {
    if (opt.acquisition != bo::AcquisitionKind::kUcb)
      throw std::invalid_argument(
          "--algo uhe-bo is GP-UCB: use --acq ucb (the paper: --beta "
          "constant:1.96)");
    return;
  }
  if (!IsBatch(a.algo)) {
    std::string names;
    for (const auto& n : AlgorithmNames()) names += (names.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown --algo '" + a.algo + "' (use " + names + ")");
  }
  if (opt.acquisition != bo::AcquisitionKind::kEi)
    throw std::invalid_argument("--algo " + a.algo + " is batch EI: use --acq ei");
  if (a.batch_max < 1 || a.batch_max > 256)
    throw std::invalid_argument("--batch-max must be in 1..256, got " +
                                std::to_string(a.batch_max));
  if (!(a.hybrid_eps >= 0))
    throw std::invalid_argument("--hybrid-eps must be >= 0 (objective units)");
  if (!std::isfinite(a.zeta)) throw std::invalid_argument("--zeta must be finite");
  const algorithms::HybridBatchOptions h = HybridOptions(a, known_optimum);  // parses fantasy
  if (h.fantasy == algorithms::Fantasy::kKnownMax && !std::isfinite(known_optimum))
    throw std::invalid_argument("--fantasy M needs a known optimum (a test function, minimised)");
}

nlohmann::json AlgorithmConfig(const AlgoArgs& a) {
  if (a.algo == "standard") return nlohmann::json::object();
  if (a.algo == "uhe-bo") return {{"algo", a.algo}};
  nlohmann::json c = {{"algo", a.algo}, {"batch_max", a.batch_max}, {"fantasy", a.fantasy}};
  if (a.algo == "hybrid-ei") c["hybrid_eps"] = a.hybrid_eps;
  if (a.fantasy == "ymax+") c["zeta"] = a.zeta;
  return c;
}

AlgoRun RunAlgorithm(const AlgoArgs& a, const bo::Objective& objective, const Eigen::VectorXd& lb,
                     const Eigen::VectorXd& ub, const bo::BoLoopOptions& opt, uint64_t seed,
                     bo::Rng& rng, bool concurrent, double known_optimum,
                     const bo::StepCallback& callback) {
  AlgoRun run;
  if (a.algo == "standard") {
    run.result = bo::RunBo(objective, lb, ub, opt, rng, callback);
    return run;
  }
  if (a.algo == "uhe-bo") {
    bo::BoLoopOptions o = opt;
    o.fit_hyperparameters = false;  // UHE-BO fits on its pseudo-i.i.d. data itself
    algorithms::ApplyUhePriors(&o.fit);
    bo::BoSession session(lb, ub, o, rng);
    bo::Rng uhe_rng(bo::DeriveSeed(seed, algorithms::kUheSeedSalt));
    algorithms::RunUheBo(session, objective, algorithms::UheVariant::kUhe, uhe_rng, callback);
    run.result = session.result();
    int random_points = 0;
    for (const auto& s : run.result.steps) random_points += s.phase == "random";
    run.summary = {{"random_points", random_points}};
    return run;
  }
  algorithms::HybridBatchOptions h = HybridOptions(a, known_optimum);
  if (concurrent)
    h.evaluate_batch = [&objective](std::vector<bo::BoStep> steps) {
      std::vector<std::thread> threads;
      for (auto& s : steps)
        threads.emplace_back([&objective, &s] { bo::BoSession::Evaluate(objective, &s); });
      for (auto& t : threads) t.join();
      return steps;
    };
  bo::BoSession session(lb, ub, opt, rng);
  bo::Rng batch_rng(bo::DeriveSeed(seed, algorithms::kHybridBatchSeedSalt));
  const algorithms::HybridBatchResult hr =
      algorithms::RunHybridBatch(session, objective, h, batch_rng, callback);
  run.result = session.result();
  run.summary = {{"batches", hr.batches},
                 {"batch_evaluations", hr.batch_evaluations},
                 {"batch_sizes", hr.batch_sizes},
                 {"speedup", hr.speedup()}};
  return run;
}

}  // namespace advbo::cli
