#include "algorithms/runner/bo_algorithms.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <thread>

#include "algorithms/hybrid_batch/hybrid_batch.h"
#include "algorithms/po_gp_ucb/po_gp_ucb.h"
#include "algorithms/uhe_bo/uhe_bo.h"
#include "bo/session.h"

namespace advbo::algorithms {
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
  return {"standard",  "hybrid-ei", "cl-batch", "uhe-bo",
          "rm-gp-ucb", "po-gp-ucb", "bo-bos",   "hyperband"};
}

std::vector<algorithms::MetaTask> LoadMetaTasks(const std::vector<std::string>& paths,
                                                const Eigen::VectorXd& lb,
                                                const Eigen::VectorXd& ub, bool maximize) {
  std::vector<algorithms::MetaTask> tasks;
  for (const std::string& path : paths) {
    std::ifstream in(path);
    if (!in) throw std::invalid_argument(path + ": cannot read the meta-task trace");
    std::vector<Eigen::VectorXd> xs;
    std::vector<double> ys;
    std::string line;
    for (int no = 1; std::getline(in, line); ++no) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const auto where = path + " line " + std::to_string(no);
      nlohmann::json r;
      try {
        r = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
        throw std::invalid_argument(where + ": not a JSON record (an `advbo bo --out` trace?)");
      }
      if (!r.is_object()) throw std::invalid_argument(where + ": not a JSON object");
      const std::string type = r.value("type", "");
      if (type == "config" && r.contains("goal") && r["goal"].is_string() &&
          (r["goal"] == "max") != maximize)
        throw std::invalid_argument(path + ": its goal is " + r["goal"].get<std::string>() +
                                    ", this run's is " + (maximize ? "max" : "min"));
      if (type != "evaluation" || !r.value("ok", false)) continue;
      if (!r.contains("x") || !r["x"].is_array() || !r.contains("y") || !r["y"].is_number())
        throw std::invalid_argument(where + ": an evaluation record without numeric x and y");
      Eigen::VectorXd x(r["x"].size());
      for (size_t k = 0; k < r["x"].size(); ++k) {
        if (!r["x"][k].is_number()) throw std::invalid_argument(where + ": x is not numeric");
        x(k) = r["x"][k].get<double>();
      }
      if (x.size() != lb.size())
        throw std::invalid_argument(where + ": " + std::to_string(x.size()) +
                                    "-dimensional x for a " + std::to_string(lb.size()) +
                                    "-dimensional box");
      if ((x.array() < lb.array()).any() || (x.array() > ub.array()).any())
        throw std::invalid_argument(where + ": x lies outside this run's box");
      xs.push_back(x);
      ys.push_back(r["y"].get<double>());
    }
    if (xs.empty()) throw std::invalid_argument(path + ": no successful evaluation to learn from");
    algorithms::MetaTask t;
    t.x.resize(static_cast<Eigen::Index>(xs.size()), lb.size());
    t.y.resize(static_cast<Eigen::Index>(ys.size()));
    for (size_t i = 0; i < xs.size(); ++i) {
      t.x.row(static_cast<Eigen::Index>(i)) = xs[i].transpose();
      t.y(static_cast<Eigen::Index>(i)) = ys[i];
    }
    tasks.push_back(std::move(t));
  }
  return tasks;
}

namespace {

// PO-GP-UCB on the --candidates records: normalise (Sec. 4), choose r (Sec. 3.4) unless given,
// release (Algorithm 1, its own engine), GP-UCB over the released rows (Algorithm 2). Records
// report the evaluated record (x), its row (extra.index); the summary the release's numbers.
AlgoRun RunPoGpUcbAlgorithm(const AlgoArgs& a, const bo::Objective& objective,
                            const bo::BoLoopOptions& opt, uint64_t seed, bo::Rng& rng,
                            const bo::StepCallback& callback) {
  const Eigen::MatrixXd& records = opt.candidates;
  const Eigen::MatrixXd x =
      a.po_max_norm > 0 ? algorithms::NormalizeMaxNorm(records, a.po_max_norm) : records;
  const double sigma_min = algorithms::SmallestSingularValue(algorithms::CenterColumns(x));
  int r = a.po_r;
  if (r == 0) {
    r = algorithms::ChooseProjectionDim(sigma_min, a.po_epsilon, a.po_delta);
    if (r == 0)
      throw std::invalid_argument(
          "--algo po-gp-ucb: no r in 5, 10, ..., 50 has omega <= sigma_min = " +
          std::to_string(sigma_min) +
          " at this --po-epsilon / --po-delta; give --po-r R (the "
          "curator then lifts the singular values, Algorithm 1 line 9)");
  }
  bo::Rng curator(bo::DeriveSeed(seed, algorithms::kPoGpUcbSeedSalt));
  const algorithms::CuratorRelease rel =
      algorithms::ReleaseDataset(x, {a.po_epsilon, a.po_delta, r}, curator);
  const bo::BoLoopOptions loop = algorithms::ModelerLoopOptions(rel.z, opt, {a.po_delta_prime});
  auto to_record = [&](bo::BoStep s) {
    const int i = s.extra["index"].get<int>();
    s.x = records.row(i).transpose();
    s.x_unit.resize(0);
    return s;
  };
  AlgoRun run;
  run.result = algorithms::RunPoGpUcb(
      rel.z, [&](int i) { return objective(records.row(i).transpose()); }, loop, rng,
      [&](const bo::BoStep& s) { return !callback || callback(to_record(s)); });
  for (auto& s : run.result.steps) s = to_record(s);
  for (const auto& s : run.result.steps)
    if (s.ok && s.y == run.result.best_y) {
      run.result.best_x = s.x;
      break;
    }
  run.summary = {{"po_r", r},
                 {"omega", rel.omega},
                 {"sigma_min", rel.sigma_min},
                 {"lifted", rel.lifted},
                 {"differential_privacy", false}};
  return run;
}

}  // namespace

void CheckAlgorithm(const AlgoArgs& a, const bo::BoLoopOptions& opt, double known_optimum) {
  if (!a.meta.empty() && a.algo != "rm-gp-ucb")
    throw std::invalid_argument("--meta is for --algo rm-gp-ucb");
  if (a.algo == "standard") return;
  if (a.algo == "rm-gp-ucb") {
    if (opt.acquisition != bo::AcquisitionKind::kUcb)
      throw std::invalid_argument("--algo rm-gp-ucb is GP-UCB with meta-tasks: use --acq ucb");
    if (a.meta.empty())
      throw std::invalid_argument(
          "--algo rm-gp-ucb needs --meta TRACE[,TRACE...] (earlier "
          "`advbo bo --out` traces on the same box)");
    return;
  }
  if (a.algo == "po-gp-ucb") {
    if (opt.acquisition != bo::AcquisitionKind::kUcb)
      throw std::invalid_argument("--algo po-gp-ucb is GP-UCB (Algorithm 2): use --acq ucb");
    if (opt.candidates.rows() == 0)
      throw std::invalid_argument(
          "--algo po-gp-ucb needs --candidates FILE: the curator's "
          "records, one per row");
    if (!(a.po_epsilon > 0) || !std::isfinite(a.po_epsilon))
      throw std::invalid_argument("--algo po-gp-ucb needs --po-epsilon E, finite and > 0");
    if (!(a.po_delta > 0 && a.po_delta < 1))
      throw std::invalid_argument("--po-delta must be in (0, 1)");
    if (!(a.po_delta_prime > 0 && a.po_delta_prime < 1))
      throw std::invalid_argument("--po-delta-prime must be in (0, 1)");
    if (a.po_r < 0) throw std::invalid_argument("--po-r must be >= 1 (or 0 = choose)");
    if (!(a.po_max_norm >= 0) || !std::isfinite(a.po_max_norm))
      throw std::invalid_argument("--po-max-norm must be finite and >= 0");
    return;
  }
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
  if (a.algo == "rm-gp-ucb") {
    const algorithms::RmGpUcbOptions o;
    return {{"algo", a.algo}, {"meta", a.meta},          {"rm_delta", o.delta},
            {"rm_r", o.r},    {"rm_epsilon", o.epsilon}, {"rm_domain_size", o.domain_size}};
  }
  if (a.algo == "po-gp-ucb")
    return {{"algo", a.algo},
            {"po_epsilon", a.po_epsilon},
            {"po_delta", a.po_delta},
            {"po_r", a.po_r},
            {"po_delta_prime", a.po_delta_prime},
            {"po_max_norm", a.po_max_norm},
            {"privacy", "none claimed: the release is one linear map of all records"}};
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
  if (a.algo == "rm-gp-ucb") {
    bo::BoSession session(lb, ub, opt, rng);
    bo::Rng meta_rng(bo::DeriveSeed(seed, algorithms::kRmGpUcbSeedSalt));
    algorithms::RunRmGpUcb(session, objective, a.meta_tasks, algorithms::RmGpUcbOptions{}, meta_rng,
                           callback);
    run.result = session.result();
    const auto& steps = run.result.steps;
    if (!steps.empty() && steps.back().extra.contains("weights"))
      run.summary = {{"final_weights", steps.back().extra["weights"]},
                     {"final_nu", steps.back().extra["nu"]}};
    return run;
  }
  if (a.algo == "po-gp-ucb") return RunPoGpUcbAlgorithm(a, objective, opt, seed, rng, callback);
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

}  // namespace advbo::algorithms
