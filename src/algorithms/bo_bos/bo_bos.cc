#include "algorithms/bo_bos/bo_bos.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "bo/clock.h"
#include "bo/design.h"
#include "bo/kernel.h"
#include "bo/optimal_stopping.h"

namespace advbo::algorithms {
namespace {

void CheckBox(const Eigen::VectorXd& lb, const Eigen::VectorXd& ub) {
  if (lb.size() < 1 || lb.size() != ub.size() || !lb.allFinite() || !ub.allFinite() ||
      !(lb.array() < ub.array()).all())
    throw std::invalid_argument(
        "BO-BOS: the box needs lb < ub, both finite and of the same size >= 1");
}

}  // namespace

void BoBosOptions::Validate() const {
  const BoBosOptions& o = *this;
  auto bad = [](const std::string& m) { throw std::invalid_argument("BO-BOS: " + m); };
  if (o.max_epochs < 2) bad("max_epochs N must be >= 2");
  if (o.early_stopping && (o.warmup_epochs < 2 || o.warmup_epochs >= o.max_epochs))
    bad("warmup_epochs N0 must satisfy 2 <= N0 < N");
  if (!(o.kappa >= 1) || !std::isfinite(o.kappa)) bad("kappa must be a finite value >= 1");
  if (!(o.k1_first > 0)) bad("k1_first must be > 0");
  if (!(o.gamma > 0 && o.gamma <= 1)) bad("gamma must be in (0, 1]");
  if (!(o.k2 > 0) || !std::isfinite(o.k2) || !(o.cost > 0) || !std::isfinite(o.cost))
    bad("k2 and cost must be finite and > 0");
  if (o.num_paths < 1 || o.grid_size < 1) bad("num_paths and grid_size must be >= 1");
  if (o.initial_points < 1) bad("initial_points must be >= 1");
  for (int e : o.intermediate_epochs)
    if (e < 1 || e >= o.max_epochs) bad("intermediate epochs must lie in [1, N)");
  if (o.epoch_budget < 1) bad("epoch_budget must be >= 1");
  if (o.max_evaluations < 0) bad("max_evaluations must be >= 0");
  if (o.refit_every < 1) bad("refit_every must be >= 1");
  if (!(o.noise_variance > 0)) bad("noise_variance must be > 0");
}

namespace {

Eigen::VectorXd WithEpoch(const Eigen::VectorXd& u, double frac) {
  Eigen::VectorXd z(u.size() + 1);
  z << u, frac;
  return z;
}

}  // namespace

double BoBosK1(const BoBosOptions& o, int t) {
  return o.k1_first / std::pow(o.gamma, std::max(1, t) - 1);
}

std::vector<bool> BoBosC2(const bo::ExactGP& gp, const Eigen::VectorXd& u, int max_epochs,
                          double kappa) {
  std::vector<bool> c2(max_epochs, true);
  if (gp.num_data() == 0) return c2;
  Eigen::MatrixXd z(max_epochs, u.size() + 1);
  for (int n = 1; n <= max_epochs; ++n)
    z.row(n - 1) = WithEpoch(u, static_cast<double>(n) / max_epochs).transpose();
  Eigen::VectorXd mean, var;
  gp.Predict(z, &mean, &var);
  const double sd_n = std::sqrt(std::max(var(max_epochs - 1), 0.0));
  for (int n = 1; n <= max_epochs; ++n)
    c2[n - 1] = sd_n <= kappa * std::sqrt(std::max(var(n - 1), 0.0));
  return c2;
}

namespace {

// The optimal-stopping problem of BO-BOS (Dai 2021 thesis, Ch. 4, Alg. 4.1): K1 decaying by
// gamma per BO iteration, the summary statistic over all epochs from the first, and a learning
// curve with an asymptote.
bo::BosOptions BosOptionsOf(const BoBosOptions& opt) {
  bo::BosOptions bos;
  bos.k1_base = opt.k1_first;
  bos.k1_decay = opt.gamma;
  bos.k1_exponent_offset = -1;
  bos.k2 = opt.k2;
  bos.cost = opt.cost;
  bos.num_paths = opt.num_paths;
  bos.grid_size = opt.grid_size;
  bos.summary_from_first_step = true;
  bos.asymptote = true;
  return bos;
}

// BO iteration t_bo's point u in [0, 1]^d: GP-UCB over (u, epoch N) after the scheduled
// hyperparameter refit; fills rec's beta, acquisition value, K1 and threshold (best error).
Eigen::VectorXd ProposePoint(bo::ExactGP* gp, const BoBosOptions& opt, int d, int t_bo,
                             double best_error, bo::Rng& rng, BoBosRecord* rec) {
  if (opt.fit_hyperparameters && (t_bo == 1 || (t_bo - 1) % opt.refit_every == 0))
    bo::FitHyperparameters(gp, opt.fit, rng);
  rec->beta = opt.beta.Beta(t_bo, d);
  const bo::UcbAcquisition ucb(*gp, rec->beta, bo::Goal::kMaximize);
  std::vector<int> block(d);
  for (int i = 0; i < d; ++i) block[i] = i;
  const bo::BlockAcquisition at_n(ucb, block, WithEpoch(Eigen::VectorXd::Zero(d), 1.0));
  const bo::AcquisitionMax m = bo::MaximizeAcquisition(
      at_n, Eigen::VectorXd::Zero(d), Eigen::VectorXd::Ones(d), opt.acquisition_optimizer, rng);
  rec->acquisition_value = m.value;
  rec->k1 = BoBosK1(opt, t_bo);
  rec->threshold = best_error;
  return m.x;
}

// Trains rec->x for up to `allowed` epochs, collecting the learning curve in rec->curve; with
// `bos_run` the stopping table is solved after the warm-up epochs and training stops when it
// says stop and condition C2 holds (Alg. 4.1 lines 6-12). Returns the seconds spent solving.
double TrainWithStopping(const CurveObjective& objective, const BoBosOptions& opt,
                         const bo::BosOptions& bos, bool bos_run, int t_bo, int allowed,
                         bo::Rng& rng, BoBosRecord* rec) {
  const int big_n = opt.max_epochs;
  std::unique_ptr<bo::BosDecisionTable> table;
  double seconds_bos = 0;
  auto report = [&](int epoch, double err) {
    if (!std::isfinite(err) || err < 0 || err > 1)
      throw std::runtime_error(
          "BO-BOS: epoch " + std::to_string(epoch) +
          " reported a validation error outside [0, 1]: " + std::to_string(err));
    rec->curve.push_back(err);
    const int n = static_cast<int>(rec->curve.size());
    if (bos_run && n == opt.warmup_epochs) {
      const auto tb = bo::Clock::now();
      Eigen::VectorXd warm = Eigen::Map<const Eigen::VectorXd>(rec->curve.data(), n);
      table = std::make_unique<bo::BosDecisionTable>(
          bo::BosDecisionTable::Solve(warm, big_n, rec->threshold, t_bo, bos, rng));
      rec->prior_success = table->prior_success();
      seconds_bos += bo::SecondsSince(tb);
    }
    if (table && n > opt.warmup_epochs && n < big_n) {
      Eigen::VectorXd so_far = Eigen::Map<const Eigen::VectorXd>(rec->curve.data(), n);
      if (table->Decide(n, table->SummaryStatistic(so_far)) == bo::BosDecision::kStop &&
          rec->c2[n - 1]) {
        rec->early_stopped = true;
        return false;
      }
    }
    return n < allowed;
  };
  objective(rec->x, allowed, report);
  if (rec->curve.empty())
    throw std::runtime_error("BO-BOS: the objective reported no epoch for evaluation " +
                             std::to_string(rec->evaluation));
  return seconds_bos;
}

// The GP's new observations of point u: -error at the epochs trained (and, with early
// stopping, at the intermediate epochs reached), inputs (u, epochs / N).
void AddCurve(bo::ExactGP* gp, const BoBosOptions& opt, const Eigen::VectorXd& u,
              const BoBosRecord& rec) {
  const int big_n = opt.max_epochs;
  if (opt.early_stopping)
    for (int e : opt.intermediate_epochs)
      if (e < rec.epochs)
        gp->AddObservation(WithEpoch(u, static_cast<double>(e) / big_n), -rec.curve[e - 1]);
  gp->AddObservation(WithEpoch(u, static_cast<double>(rec.epochs) / big_n), -rec.error);
}

}  // namespace

BoBosResult RunBoBos(const CurveObjective& objective, const Eigen::VectorXd& lb,
                     const Eigen::VectorXd& ub, const BoBosOptions& opt, bo::Rng& rng,
                     const BoBosCallback& callback) {
  CheckBox(lb, ub);
  opt.Validate();
  const int d = static_cast<int>(lb.size());
  const int big_n = opt.max_epochs;
  const Eigen::VectorXd width = ub - lb;
  bo::ExactGP gp(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kMatern52, d + 1, true,
                                                        std::vector<int>{}, 0.2, 1.0),
                 opt.noise_variance, true);
  const Eigen::MatrixXd design =
      bo::MakeDesign(bo::DesignKind::kSobol, opt.initial_points, Eigen::VectorXd::Zero(d),
                     Eigen::VectorXd::Ones(d), rng);
  const bo::BosOptions bos = BosOptionsOf(opt);
  BoBosResult res;
  int t_bo = 0;
  while (res.epochs_used < opt.epoch_budget) {
    if (opt.max_evaluations > 0 && static_cast<int>(res.records.size()) >= opt.max_evaluations) {
      res.stop_reason = "evaluations";
      break;
    }
    BoBosRecord rec;
    rec.evaluation = static_cast<int>(res.records.size()) + 1;
    const auto t0 = bo::Clock::now();
    Eigen::VectorXd u;
    if (rec.evaluation <= opt.initial_points) {
      rec.phase = "init";
      u = design.row(rec.evaluation - 1).transpose();
    } else {
      rec.phase = "bo";
      rec.bo_iteration = ++t_bo;
      u = ProposePoint(&gp, opt, d, t_bo, res.best_error, rng, &rec);
    }
    rec.x = lb + u.cwiseProduct(width);
    const bool bos_run = opt.early_stopping && rec.phase == "bo";
    if (bos_run) rec.c2 = BoBosC2(gp, u, big_n, opt.kappa);
    const int allowed = std::min(big_n, opt.epoch_budget - res.epochs_used);
    const double seconds_select = bo::SecondsSince(t0);
    const auto t_train = bo::Clock::now();
    const double seconds_bos =
        TrainWithStopping(objective, opt, bos, bos_run, t_bo, allowed, rng, &rec);
    rec.seconds_train = bo::SecondsSince(t_train) - seconds_bos;
    rec.epochs = static_cast<int>(rec.curve.size());
    rec.budget_cut = rec.epochs < big_n && !rec.early_stopped;
    rec.error = rec.curve.back();
    res.epochs_used += rec.epochs;
    rec.epochs_total = res.epochs_used;
    const auto t_upd = bo::Clock::now();
    AddCurve(&gp, opt, u, rec);
    if (!(rec.error >= res.best_error)) {
      res.best_error = rec.error;
      res.best_x = rec.x;
    }
    rec.best_error = res.best_error;
    rec.seconds_bo = seconds_select + seconds_bos + bo::SecondsSince(t_upd);
    res.records.push_back(rec);
    if (callback && !callback(res.records.back())) {
      res.stop_reason = "callback";
      break;
    }
  }
  if (res.stop_reason.empty()) res.stop_reason = "budget";
  res.kernel = gp.kernel().Describe();
  return res;
}

}  // namespace advbo::algorithms
