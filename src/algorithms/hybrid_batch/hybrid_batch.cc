#include "algorithms/hybrid_batch/hybrid_batch.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "bo/acquisition.h"
#include "bo/acquisition_optimizer.h"
#include "bo/clock.h"
#include "bo/enum_names.h"

namespace advbo::algorithms {
namespace {

using bo::Clock;

// Posterior covariance blocks of [xa; z] given the GP's data: Sigma_AA [m, m] (of the
// observations y_A), Sigma_zA [m] (latent), and the posterior mean of xa [m].
void JointBlocks(const bo::ExactGP& gp, const Eigen::MatrixXd& xa, const Eigen::VectorXd& z,
                 Eigen::MatrixXd* saa, Eigen::VectorXd* sza, Eigen::VectorXd* mu_a) {
  const Eigen::Index m = xa.rows();
  if (m < 1 || xa.cols() != z.size())
    throw std::invalid_argument("hybrid batch: need batch points [m >= 1, d] and z [d]");
  Eigen::MatrixXd pts(m + 1, z.size());
  pts << xa, z.transpose();
  Eigen::VectorXd mean;
  Eigen::MatrixXd cov;
  gp.PredictJoint(pts, &mean, &cov);
  // Observation covariance of the batch: the latent posterior plus the GP's noise (in
  // original units), as the outcomes y_A are observed like O's (noise-free: latent only).
  const double noise = gp.noise_variance() * gp.y_scale() * gp.y_scale();
  // A floor of 1e-10 prior variances keeps Sigma_AA invertible when a batch point sits on an
  // observed point of a noise-free GP (its outcome is known: Sigma_zA = 0, so g = 0 there).
  *saa = cov.topLeftCorner(m, m) + noise * Eigen::MatrixXd::Identity(m, m);
  const double floor = 1e-10 * gp.kernel().Diag(z.transpose())(0) * gp.y_scale() * gp.y_scale();
  if (saa->diagonal().minCoeff() < floor) saa->diagonal().array() += floor;
  *sza = cov.row(m).head(m).transpose();
  if (mu_a) *mu_a = mean.head(m);
}

Eigen::RowVectorXd Sensitivity(const Eigen::MatrixXd& saa, const Eigen::VectorXd& sza) {
  double jitter = 0;
  const Eigen::MatrixXd l = bo::CholeskyWithJitter(saa, &jitter);
  Eigen::VectorXd g = l.triangularView<Eigen::Lower>().solve(sza);
  l.triangularView<Eigen::Lower>().transpose().solveInPlace(g);
  return g.transpose();
}

}  // namespace

namespace {
constexpr bo::NamedValue<Fantasy> kFantasyNames[] = {
    {Fantasy::kKnownMax, "M"}, {Fantasy::kBest, "ymax"},  {Fantasy::kBestMargin, "ymax+"},
    {Fantasy::kMean, "mu"},    {Fantasy::kWorst, "ymin"}, {Fantasy::kRandom, "random"}};
}  // namespace

Fantasy ParseFantasy(const std::string& name) {
  return bo::ParseNamed(kFantasyNames, name, "fantasy");
}

std::string FantasyName(Fantasy f) { return bo::NameOf(kFantasyNames, f); }

Eigen::RowVectorXd MeanSensitivity(const bo::ExactGP& gp, const Eigen::MatrixXd& xa,
                                   const Eigen::VectorXd& z) {
  Eigen::MatrixXd saa;
  Eigen::VectorXd sza;
  JointBlocks(gp, xa, z, &saa, &sza, nullptr);
  return Sensitivity(saa, sza);
}

SwitchCriterion ComputeCriterion(const bo::ExactGP& gp, const Eigen::MatrixXd& xa,
                                 const Eigen::VectorXd& ya, const Eigen::VectorXd& z) {
  if (ya.size() != xa.rows())
    throw std::invalid_argument("hybrid batch: one fantasy per batch point needed");
  Eigen::MatrixXd saa;
  Eigen::VectorXd sza, mu_a;
  JointBlocks(gp, xa, z, &saa, &sza, &mu_a);
  SwitchCriterion c;
  c.gamma = Sensitivity(saa, sza).norm();
  c.theta = std::sqrt(std::max(0.0, saa.trace()));
  c.bias = (ya - mu_a).norm();
  return c;
}

bo::BoLoopOptions Azimi2012LoopOptions(const Eigen::VectorXd& lb, const Eigen::VectorXd& ub) {
  const Eigen::Index d = lb.size();
  if (d < 1 || ub.size() != d || !(ub.array() > lb.array()).all())
    throw std::invalid_argument("Azimi2012LoopOptions: need a box lb < ub, both [d]");
  const Eigen::VectorXd width = ub - lb;
  const double l = 0.01 * width.sum();
  bo::BoLoopOptions o;
  o.goal = bo::Goal::kMaximize;
  o.acquisition = bo::AcquisitionKind::kEi;
  o.kernel = bo::KernelFamily::kSquaredExponential;
  o.ard = true;  // one isotropic kernel in caller units = per-axis lengthscales in [0,1]^d
  // exp(-||dx||^2 / l) = exp(-0.5 sum_i (du_i / ls_i)^2) with dx_i = w_i du_i.
  o.initial_lengthscales = (std::sqrt(l / 2.0) / width.array()).matrix();
  o.initial_signal_variance = 1.0;
  o.fit_hyperparameters = false;
  o.noise_variance = 0.0;
  o.standardize = false;
  o.initial_design = bo::DesignKind::kUniform;
  o.initial_points = d <= 3 ? 2 : 5;
  o.budget = o.initial_points + (d <= 3 ? 15 : 30);
  return o;
}

HybridBatchOptions Azimi2012HybridOptions(int d) {
  HybridBatchOptions o;
  o.batch_max = 5;
  o.epsilon = d <= 3 ? 0.02 : 0.2;
  o.fantasy = Fantasy::kMean;
  return o;
}

namespace {

// The fantasised output at u (Azimi et al. 2012, Sec. 3: what the batch pretends point u
// returned): the known optimum M, y_max, (1 + zeta) y_max, the posterior mean of g at u,
// y_min, or uniform in [y_min, y_max].
double FantasyAt(const HybridBatchOptions& opt, const bo::BoSession& session, const bo::ExactGP& g,
                 const Eigen::VectorXd& u, double y_max, double y_min, bo::Rng& rng) {
  switch (opt.fantasy) {
    case Fantasy::kKnownMax:
      return session.Score(opt.known_optimum);
    case Fantasy::kBest:
      return y_max;
    case Fantasy::kBestMargin:
      return (1.0 + opt.zeta) * y_max;
    case Fantasy::kMean: {
      Eigen::VectorXd m, v;
      g.Predict(u.transpose(), &m, &v);
      return m(0);
    }
    case Fantasy::kWorst:
      return y_min;
    case Fantasy::kRandom:
      return y_min + (y_max - y_min) * std::uniform_real_distribution<double>(0, 1)(rng);
  }
  return y_max;
}

// Alg. 1 of Azimi et al. 2012: A <- (x1*, y^1); while eq. 3 holds (the criterion <= epsilon),
// |A| < n_b and budget remains, add z = argmax EI on the GP fantasised with A. Returns the
// batch's points (unit box) and their criteria (NaN for the first).
std::vector<Eigen::VectorXd> GrowBatch(const bo::BoSession& session, const HybridBatchOptions& opt,
                                       const Eigen::VectorXd& first, bo::Rng& rng,
                                       std::vector<double>* criteria) {
  const int d = session.dim();
  const Eigen::VectorXd ulb = Eigen::VectorXd::Zero(d), uub = Eigen::VectorXd::Ones(d);
  const bo::ExactGP& gp = session.gp();
  const double y_max = gp.y().maxCoeff(), y_min = gp.y().minCoeff();
  std::vector<Eigen::VectorXd> batch{first};
  *criteria = {std::numeric_limits<double>::quiet_NaN()};
  Eigen::VectorXd fantasies =
      Eigen::VectorXd::Constant(1, FantasyAt(opt, session, gp, first, y_max, y_min, rng));
  bo::ExactGP fant = gp.Fantasize(first.transpose(), fantasies);
  const int room = std::min(opt.batch_max, session.remaining());
  while (static_cast<int>(batch.size()) < room) {
    // z = argmax EI^(x | O u A): EI on the fantasised GP against max(y_max, y^_A).
    const bo::ExpectedImprovement ei(fant, fant.y().maxCoeff(),
                                     session.options().xi * fant.y_scale());
    Eigen::Index ib = 0;
    fant.y().maxCoeff(&ib);
    const Eigen::MatrixXd incumbent = fant.X().row(ib);
    int index = 0;
    const bo::AcquisitionMax z =
        session.candidates_unit().rows() > 0
            ? bo::MaximizeOverSet(ei, session.candidates_unit(), &index)
            : bo::MaximizeAcquisition(ei, ulb, uub, session.options().acquisition_optimizer, rng,
                                      incumbent);
    Eigen::MatrixXd xa(batch.size(), d);
    for (size_t i = 0; i < batch.size(); ++i) xa.row(i) = batch[i].transpose();
    double value = std::numeric_limits<double>::infinity();
    try {
      value = ComputeCriterion(gp, xa, fantasies, z.x).value();
    } catch (const bo::NumericalError&) {  // cannot bound the error: stay sequential
    }
    if (!(value <= opt.epsilon)) break;
    const double yz = FantasyAt(opt, session, fant, z.x, y_max, y_min, rng);
    batch.push_back(z.x);
    criteria->push_back(value);
    fantasies.conservativeResize(fantasies.size() + 1);
    fantasies(fantasies.size() - 1) = yz;
    fant = fant.Fantasize(z.x.transpose(), Eigen::VectorXd::Constant(1, yz));
  }
  return batch;
}

// The trace steps of batch number `batch_no`: the session's proposal `first` (carrying the
// batch's selection seconds) and the added points, each with its position and criterion.
std::vector<bo::BoStep> BatchSteps(const bo::BoSession& session, const HybridBatchOptions& opt,
                                   const bo::BoStep& first, double seconds_batch, int batch_no,
                                   const std::vector<Eigen::VectorXd>& batch,
                                   const std::vector<double>& criteria) {
  const int m = static_cast<int>(batch.size());
  std::vector<bo::BoStep> steps(m);
  for (int i = 0; i < m; ++i) {
    bo::BoStep& s = steps[i];
    if (i == 0) {
      s = first;
      s.seconds_bo += seconds_batch;  // this batch's selection cost sits on its first point
    } else {
      s.phase = "bo";
      s.x_unit = batch[i];
      s.x = session.FromUnit(batch[i]);
    }
    s.extra = {{"batch", batch_no},
               {"batch_size", m},
               {"position", i + 1},
               {"criterion",
                std::isnan(criteria[i]) ? nlohmann::json(nullptr) : nlohmann::json(criteria[i])},
               {"fantasy", FantasyName(opt.fantasy)}};
  }
  return steps;
}

}  // namespace

void HybridBatchOptions::Validate() const {
  if (batch_max < 1) throw std::invalid_argument("hybrid batch: batch_max must be >= 1");
  if (!(epsilon >= 0)) throw std::invalid_argument("hybrid batch: epsilon must be >= 0");
  if (fantasy == Fantasy::kKnownMax && !std::isfinite(known_optimum))
    throw std::invalid_argument("hybrid batch: fantasy M needs the known optimum");
}

HybridBatchResult RunHybridBatch(bo::BoSession& session, const bo::Objective& objective,
                                 const HybridBatchOptions& opt, bo::Rng& batch_rng,
                                 const std::function<bool(const bo::BoStep&)>& callback) {
  opt.Validate();
  if (session.options().acquisition != bo::AcquisitionKind::kEi)
    throw std::invalid_argument("hybrid batch: the session must use EI (Alg. 1)");
  HybridBatchResult res;
  auto record = [&](bo::BoStep step) {
    const bo::BoStep& s = session.Record(std::move(step));
    if (callback && !callback(s)) session.Stop("callback");
  };
  auto evaluate = [&](std::vector<bo::BoStep> steps) {
    if (opt.evaluate_batch) return opt.evaluate_batch(std::move(steps));
    for (auto& s : steps) bo::BoSession::Evaluate(objective, &s);
    return steps;
  };
  while (!session.done()) {
    bo::BoStep first = session.Propose();
    if (first.phase == "init") {  // the design: one point at a time, not a batch
      first.extra = {{"batch", 0},
                     {"batch_size", 1},
                     {"position", 1},
                     {"criterion", nullptr},
                     {"fantasy", FantasyName(opt.fantasy)}};
      auto done = evaluate({first});
      record(std::move(done[0]));
      continue;
    }
    const auto t0 = Clock::now();
    std::vector<double> criteria;
    const std::vector<Eigen::VectorXd> batch =
        GrowBatch(session, opt, first.x_unit, batch_rng, &criteria);
    const double seconds_batch = bo::SecondsSince(t0);
    ++res.batches;
    const int m = static_cast<int>(batch.size());
    res.batch_sizes.push_back(m);
    res.batch_evaluations += m;
    std::vector<bo::BoStep> steps =
        evaluate(BatchSteps(session, opt, first, seconds_batch, res.batches, batch, criteria));
    for (auto& s : steps) {
      if (session.done()) break;  // a failed evaluation under OnError::kStop
      record(std::move(s));
    }
  }
  return res;
}

}  // namespace advbo::algorithms
