#include "algorithms/rm_gp_ucb/rm_gp_ucb.h"

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "bo/acquisition_optimizer.h"
#include "bo/clock.h"
#include "bo/hyperparameters.h"

namespace advbo::algorithms {

Eigen::VectorXd MetaWeights(const Eigen::VectorXd& cumulative_loss, double eta) {
  if (cumulative_loss.size() < 1)
    throw std::invalid_argument("MetaWeights: need at least one meta-task");
  if (!(eta >= 0) || !std::isfinite(eta))
    throw std::invalid_argument("MetaWeights: the learning rate eta must be finite and >= 0");
  if (!cumulative_loss.allFinite())
    throw std::invalid_argument("MetaWeights: cumulative losses must be finite");
  const Eigen::ArrayXd e = -eta * cumulative_loss.array();
  const Eigen::ArrayXd w = (e - e.maxCoeff()).exp();
  return (w / w.sum()).matrix();
}

double GapEstimate(const Eigen::VectorXd& y, const Eigen::VectorXd& upper,
                   const Eigen::VectorXd& lower, bool mean_form) {
  if (y.size() < 1 || upper.size() != y.size() || lower.size() != y.size())
    throw std::invalid_argument("GapEstimate: y, upper and lower must have the same size >= 1");
  const Eigen::ArrayXd d = (y - upper).array().abs().max((y - lower).array().abs());
  return mean_form ? d.mean() : d.maxCoeff();
}

double NextNu(double nu_prev, double weighted_gap, double r, double epsilon) {
  if (!(nu_prev >= 0 && nu_prev <= 1)) throw std::invalid_argument("NextNu: nu must be in [0, 1]");
  if (!(r > 0 && r < 1)) throw std::invalid_argument("NextNu: r must be in (0, 1)");
  if (!(epsilon > 0) || !std::isfinite(epsilon))
    throw std::invalid_argument("NextNu: epsilon must be finite and > 0");
  if (std::isnan(weighted_gap)) throw std::invalid_argument("NextNu: the weighted gap is NaN");
  const double decay = weighted_gap > 0 ? std::min(r, std::pow(weighted_gap, -epsilon)) : r;
  return nu_prev * decay;
}

MetaUcbAcquisition::MetaUcbAcquisition(const bo::ExactGP& target,
                                       const std::vector<const bo::ExactGP*>& metas,
                                       const Eigen::VectorXd& weights, double nu, double beta,
                                       double tau)
    : target_(target, beta), weights_(weights), nu_(nu) {
  if (static_cast<size_t>(weights.size()) != metas.size())
    throw std::invalid_argument("MetaUcbAcquisition: one weight per meta-task");
  if (!(nu >= 0 && nu <= 1))
    throw std::invalid_argument("MetaUcbAcquisition: nu must be in [0, 1]");
  if (metas.size() > 0 && ((weights.array() < 0).any() || std::abs(weights.sum() - 1) > 1e-9))
    throw std::invalid_argument("MetaUcbAcquisition: weights must form a probability vector");
  if (!(tau >= 0)) throw std::invalid_argument("MetaUcbAcquisition: tau must be >= 0");
  if (metas.empty() && nu != 0)
    throw std::invalid_argument("MetaUcbAcquisition: nu > 0 needs at least one meta-task");
  metas_.reserve(metas.size());
  for (const bo::ExactGP* g : metas) {
    if (g == nullptr || g->X().cols() != target.X().cols())
      throw std::invalid_argument("MetaUcbAcquisition: meta GPs must match the target's dimension");
    metas_.emplace_back(*g, tau);
  }
}

Eigen::VectorXd MetaUcbAcquisition::Evaluate(const Eigen::MatrixXd& x) const {
  Eigen::VectorXd v = (1 - nu_) * target_.Evaluate(x);
  for (size_t i = 0; i < metas_.size(); ++i) v += nu_ * weights_(i) * metas_[i].Evaluate(x);
  return v;
}

double MetaUcbAcquisition::ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const {
  Eigen::VectorXd g;
  double v = (1 - nu_) * target_.ValueAndGradient(x, grad ? &g : nullptr);
  if (grad) *grad = (1 - nu_) * g;
  for (size_t i = 0; i < metas_.size(); ++i) {
    const double c = nu_ * weights_(i);
    v += c * metas_[i].ValueAndGradient(x, grad ? &g : nullptr);
    if (grad) *grad += c * g;
  }
  return v;
}

double RmBeta(int t, double domain_size, double delta) {
  const double tt = std::max(1, t);
  return 2.0 * std::log(domain_size * tt * tt * M_PI * M_PI / (2.0 * delta));
}

double RmTau(double domain_size, int num_meta, double delta) {
  return 2.0 * std::log(3.0 * domain_size * num_meta / delta);
}

namespace {

// The meta-tasks as GPs (Dai 2021 thesis, Ch. 7, Alg. 7.1 line 1): one per task on unit inputs
// [N_i, d] and sign-adjusted outputs [N_i], with the session's kernel, fitted once.
struct MetaGps {
  std::vector<std::unique_ptr<bo::ExactGP>> gps;
  std::vector<Eigen::MatrixXd> units;
  std::vector<Eigen::VectorXd> scores;
  double mean_n = 0;  // mean number of observations per task
};

MetaGps FitMetaGps(const bo::BoSession& s, const std::vector<MetaTask>& metas, bo::Rng& rng) {
  const int m = static_cast<int>(metas.size()), d = s.dim();
  MetaGps out;
  out.units.resize(m);
  out.scores.resize(m);
  for (int i = 0; i < m; ++i) {
    const MetaTask& task = metas[i];
    if (task.x.rows() < 1 || task.x.rows() != task.y.size() || task.x.cols() != d)
      throw std::invalid_argument("meta-task " + std::to_string(i + 1) +
                                  ": need N >= 1 rows of x [N, d] and y [N]");
    out.units[i].resize(task.x.rows(), d);
    out.scores[i].resize(task.y.size());
    for (Eigen::Index j = 0; j < task.x.rows(); ++j) {
      const Eigen::VectorXd u = s.ToUnit(task.x.row(j).transpose());
      if ((u.array() < -1e-12).any() || (u.array() > 1 + 1e-12).any() || !u.allFinite() ||
          !std::isfinite(task.y(j)))
        throw std::invalid_argument("meta-task " + std::to_string(i + 1) + ": row " +
                                    std::to_string(j + 1) + " is outside the box or not finite");
      out.units[i].row(j) = u.transpose();
      out.scores[i](j) = s.Score(task.y(j));
    }
    auto gp = std::make_unique<bo::ExactGP>(s.gp().kernel().Clone(), s.gp().noise_variance());
    gp->SetData(out.units[i], out.scores[i]);
    if (s.options().fit_hyperparameters && out.units[i].rows() >= 2)
      bo::FitHyperparameters(gp.get(), s.options().fit, rng);
    out.gps.push_back(std::move(gp));
    out.mean_n += static_cast<double>(task.x.rows()) / m;
  }
  return out;
}

// The step of iteration t: the maximiser of the meta-UCB acquisition (eq. 7.2) over the
// candidates or the unit box, with its trace fields.
bo::BoStep MetaUcbStep(bo::BoSession& s, const std::vector<const bo::ExactGP*>& metas,
                       const Eigen::VectorXd& weights, const Eigen::VectorXd& gaps, double nu,
                       double beta, double tau, int t) {
  const int m = static_cast<int>(metas.size()), d = s.dim();
  const MetaUcbAcquisition acq(s.gp(), metas, weights, nu, beta, tau);
  int index = -1;
  const bo::AcquisitionMax best =
      s.candidates_unit().rows() > 0
          ? bo::MaximizeOverSet(acq, s.candidates_unit(), &index)
          : bo::MaximizeAcquisition(acq, Eigen::VectorXd::Zero(d), Eigen::VectorXd::Ones(d),
                                    s.options().acquisition_optimizer, s.rng());
  bo::BoStep step;
  step.phase = "bo";
  step.x_unit = best.x;
  step.x = s.FromUnit(best.x);
  step.acquisition_value = best.value;
  step.beta = beta;
  step.extra = {{"t", t},
                {"nu", nu},
                {"weights", std::vector<double>(weights.data(), weights.data() + m)},
                {"gaps", std::vector<double>(gaps.data(), gaps.data() + m)}};
  return step;
}

}  // namespace

void RmGpUcbOptions::Validate() const {
  if (!(delta > 0 && delta < 1)) throw std::invalid_argument("RM-GP-UCB: delta in (0, 1)");
  if (!(domain_size >= 1)) throw std::invalid_argument("RM-GP-UCB: domain size >= 1");
  if (!(r > 0 && r < 1)) throw std::invalid_argument("RM-GP-UCB: r in (0, 1)");
  if (!(epsilon > 0)) throw std::invalid_argument("RM-GP-UCB: epsilon > 0");
}

void RunRmGpUcb(bo::BoSession& s, const bo::Objective& objective,
                const std::vector<MetaTask>& metas, const RmGpUcbOptions& o, bo::Rng& rng,
                const bo::StepCallback& callback) {
  if (metas.empty()) throw std::invalid_argument("RM-GP-UCB needs at least one meta-task");
  o.Validate();
  const int m = static_cast<int>(metas.size());
  const MetaGps meta = FitMetaGps(s, metas, rng);
  std::vector<const bo::ExactGP*> meta_ptrs;
  for (const auto& g : meta.gps) meta_ptrs.push_back(g.get());
  const double n15 = std::pow(meta.mean_n, 1.5);
  const double eta = o.eta >= 0 ? o.eta : 1.0 / n15;
  const double size = s.candidates_unit().rows() > 0
                          ? static_cast<double>(s.candidates_unit().rows())
                          : o.domain_size;
  const double tau = RmTau(size, m, o.delta);
  Eigen::VectorXd cumulative = Eigen::VectorXd::Zero(m),
                  weights = Eigen::VectorXd::Constant(m, 1.0 / m);
  Eigen::VectorXd gaps = Eigen::VectorXd::Zero(m);
  double nu = o.use_meta ? 1.0 : 0.0;
  int t = 0;
  while (!s.done()) {
    if (s.evaluations() < s.initial_points()) {
      const bo::BoStep& st = s.Step(objective);
      if (callback && !callback(st)) s.Stop("callback");
      continue;
    }
    const auto t0 = bo::Clock::now();
    ++t;
    if (s.options().fit_hyperparameters) s.Refit();
    const double beta = RmBeta(t, size, o.delta);
    if (t > 1 && o.use_meta) {
      // The meta-tasks' gaps to the target (eq. 7.3), their weights and nu (Alg. 7.1).
      for (int i = 0; i < m; ++i) {
        Eigen::VectorXd mean, var;
        s.gp().Predict(meta.units[i], &mean, &var);
        const Eigen::VectorXd sd = var.cwiseMax(0.0).cwiseSqrt() * std::sqrt(beta);
        gaps(i) = GapEstimate(meta.scores[i], mean + sd, mean - sd, o.mean_gaps);
      }
      cumulative += gaps;
      if (o.learn_weights) weights = MetaWeights(n15 * cumulative, eta);
      nu = NextNu(nu, weights.dot(gaps), o.r, o.epsilon);
    }
    bo::BoStep step = MetaUcbStep(s, meta_ptrs, weights, gaps, nu, beta, tau, t);
    step.seconds_bo = bo::SecondsSince(t0);
    bo::BoSession::Evaluate(objective, &step);
    const bo::BoStep& rec = s.Record(std::move(step));
    if (callback && !callback(rec)) s.Stop("callback");
  }
}

}  // namespace advbo::algorithms
