#include "algorithms/fts/federated.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "bo/kernel.h"
#include "bo/random_features.h"

namespace advbo::algorithms {
namespace {

constexpr uint64_t kFeatureSalt = 0x66656174ULL, kServerSalt = 0x73727672ULL;

// One agent's state: its observations and its engine.
struct Agent {
  std::vector<int> idx;
  std::vector<double> y;
  Eigen::VectorXd message;  // omega_{n,t} of the last round
  bo::Rng rng;
  int region = 0;
};

// An exact joint draw of the agent's GP posterior at every domain row (pathwise conditioning,
// Wilson et al. 2020: f = f0 + K(., X)(K_XX + s2 I)^{-1}(y - f0(X) - eps), f0 = L z a prior
// draw with L the prior Cholesky of the domain).
Eigen::VectorXd PosteriorDraw(const Eigen::MatrixXd& kxx, const Eigen::MatrixXd& prior_chol,
                              const Agent& a, double noise, bo::Rng& rng) {
  const Eigen::Index k = kxx.rows();
  std::normal_distribution<double> n01(0.0, 1.0);
  Eigen::VectorXd z(k);
  for (Eigen::Index i = 0; i < k; ++i) z(i) = n01(rng);
  Eigen::VectorXd f = prior_chol.triangularView<Eigen::Lower>() * z;
  const Eigen::Index t = static_cast<Eigen::Index>(a.idx.size());
  if (t == 0) return f;
  Eigen::MatrixXd ktt(t, t), kxt(k, t);
  Eigen::VectorXd r(t);
  for (Eigen::Index j = 0; j < t; ++j) {
    kxt.col(j) = kxx.col(a.idx[j]);
    for (Eigen::Index l = 0; l < t; ++l) ktt(j, l) = kxx(a.idx[j], a.idx[l]);
    r(j) = a.y[j] - f(a.idx[j]) - std::sqrt(noise) * n01(rng);
  }
  ktt.diagonal().array() += noise;
  const Eigen::LLT<Eigen::MatrixXd> llt(ktt);
  f += kxt * llt.solve(r);
  return f;
}

int ArgMax(const Eigen::VectorXd& v) {
  Eigen::Index i = 0;
  v.maxCoeff(&i);
  return static_cast<int>(i);
}

}  // namespace

double DeWeightExponent(int t, int hold, int decay) {
  if (hold < 0 || decay < 2)
    throw std::invalid_argument("DeWeightExponent: hold must be >= 0 and decay >= 2");
  if (t <= hold + 1) return 16.0;
  if (t >= hold + decay) return 1.0;
  return 16.0 - 15.0 * (t - hold - 1) / (decay - 1);
}

std::vector<int> DomainRegions(const Eigen::MatrixXd& x, int regions) {
  if (regions < 1) throw std::invalid_argument("DomainRegions: P must be >= 1");
  std::vector<int> r(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    r[i] = std::clamp(static_cast<int>(std::floor(x(i, 0) * regions)), 0, regions - 1);
  return r;
}

namespace {

// RunFederated's argument checks (std::invalid_argument naming the problem).
void CheckFederated(const Eigen::MatrixXd& x, int n, const FederatedOptions& o) {
  if (x.rows() < 1 || n < 1)
    throw std::invalid_argument("RunFederated: need a domain and >= 1 agent");
  o.Validate();
  if (o.algo == FederatedAlgo::kFts && n < 2)
    throw std::invalid_argument("RunFederated: FTS needs at least 2 agents");
}

// The lower Cholesky factor of the domain's prior covariance kxx, with the smallest jitter
// (1e-10 .. 1e-2 times the signal variance) that makes it PD; std::runtime_error otherwise.
Eigen::MatrixXd PriorCholesky(const Eigen::MatrixXd& kxx, double signal_variance) {
  for (double jitter = 1e-10;; jitter *= 10) {
    Eigen::MatrixXd kj = kxx;
    kj.diagonal().array() += jitter * signal_variance;
    Eigen::LLT<Eigen::MatrixXd> llt(kj);
    if (llt.info() == Eigen::Success) return llt.matrixL();
    if (jitter > 1e-2) throw std::runtime_error("RunFederated: the domain kernel is not PD");
  }
}

// One federated run (Dai 2021 thesis, Alg. 5.1 / 6.1 / 6.2): the shared domain kernel,
// features and sub-regions, the agents, and the server's broadcast.
class FederatedRun {
 public:
  FederatedRun(const Eigen::MatrixXd& x, int n, const std::function<double(int, int)>& evaluate,
               const FederatedOptions& o, uint64_t seed)
      : x_(x),
        n_(n),
        evaluate_(evaluate),
        o_(o),
        p_regions_(o.algo == FederatedAlgo::kDpFtsDe ? o.regions : 1),
        kernel_(bo::KernelFamily::kSquaredExponential, static_cast<int>(x.cols()), false, {},
                o.lengthscale, o.signal_variance),
        kxx_(kernel_.Eval(x, x)),
        prior_chol_(PriorCholesky(kxx_, o.signal_variance)),
        agents_(n),
        server_rng_(bo::DeriveSeed(seed, kServerSalt)) {
    bo::Rng feature_rng(bo::DeriveSeed(seed, kFeatureSalt));
    const bo::RandomFeatures rf(kernel_, o.features, feature_rng);
    phi_ = NormalizedFeatures(rf, x, o.signal_variance);
    region_ = DomainRegions(x, p_regions_);
    region_rows_.resize(p_regions_);
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      region_rows_[region_[i]].push_back(static_cast<int>(i));
    if (o.local_init)
      for (const auto& rows : region_rows_)
        if (rows.empty()) throw std::invalid_argument("RunFederated: a sub-region holds no point");
    for (int a = 0; a < n; ++a) {
      agents_[a].rng.seed(bo::DeriveSeed(seed, static_cast<uint64_t>(a)));
      agents_[a].region = a % p_regions_;
    }
  }

  // t = 0: every agent's initial points (Alg. 6.2 line 2), then the first messages.
  FederatedRound InitialRound() {
    FederatedRound r0;
    r0.index.resize(n_);
    r0.y.resize(n_);
    r0.source.assign(n_, -1);
    const int k = static_cast<int>(x_.rows());
    tbb::parallel_for(0, n_, [&](int a) {
      Agent& ag = agents_[a];
      const std::vector<int>* pool = o_.local_init ? &region_rows_[ag.region] : nullptr;
      const int size = pool ? static_cast<int>(pool->size()) : k;
      std::vector<int> order(size);
      for (int i = 0; i < size; ++i) order[i] = pool ? (*pool)[i] : i;
      const int m = std::min(o_.initial_points, size);
      for (int i = 0; i < m; ++i) {
        std::uniform_int_distribution<int> pick(i, size - 1);
        std::swap(order[i], order[pick(ag.rng)]);
        ag.idx.push_back(order[i]);
        ag.y.push_back(evaluate_(a, order[i]));
      }
      r0.index[a] = ag.idx.back();
      r0.y[a] = ag.y.back();
      Send(ag);
    });
    Serve(0, &r0);
    return r0;
  }

  // Round t >= 1: each agent maximises its own posterior draw with probability p_t, else
  // (FTS) another agent's last message or (DP-FTS-DE) the server's broadcast.
  FederatedRound Round(int t) {
    previous_.resize(n_);
    for (int a = 0; a < n_; ++a) previous_[a] = agents_[a].message;
    FederatedRound r;
    r.round = t;
    r.index.resize(n_);
    r.y.resize(n_);
    r.source.assign(n_, -1);
    const double p = FtsProbability(t, o_.schedule, o_.constant_p);
    tbb::parallel_for(0, n_, [&](int a) {
      Agent& ag = agents_[a];
      std::uniform_real_distribution<double> u01(0.0, 1.0);
      const double u = u01(ag.rng);
      int i = 0;
      if (o_.algo == FederatedAlgo::kTs || u <= p) {
        i = ArgMax(PosteriorDraw(kxx_, prior_chol_, ag, o_.noise_variance, ag.rng));
      } else if (o_.algo == FederatedAlgo::kFts) {
        std::uniform_int_distribution<int> pick(0, n_ - 2);
        int other = pick(ag.rng);
        if (other >= a) ++other;
        i = ArgMax(phi_ * previous_[other]);
        r.source[a] = other;
      } else {
        Eigen::VectorXd v(x_.rows());
        for (Eigen::Index j = 0; j < x_.rows(); ++j) v(j) = phi_.row(j).dot(joint_.row(region_[j]));
        i = ArgMax(v);
        r.source[a] = -2;
      }
      ag.idx.push_back(i);
      ag.y.push_back(evaluate_(a, i));
      r.index[a] = i;
      r.y[a] = ag.y.back();
      Send(ag);
    });
    Serve(t, &r);
    return r;
  }

 private:
  // The agent's message omega_{n,t}: a draw of its weight posterior on the shared features.
  void Send(Agent& a) const {
    Eigen::MatrixXd pa(a.idx.size(), phi_.cols());
    for (size_t j = 0; j < a.idx.size(); ++j) pa.row(j) = phi_.row(a.idx[j]);
    const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(a.y.data(), a.y.size());
    a.message = FeaturePosterior(pa, y, o_.noise_variance).Sample(a.rng);
  }
  // DP-FTS-DE's server step (Alg. 6.1): region-weighted, subsampled, clipped, noised messages.
  void Serve(int t, FederatedRound* round) {
    if (o_.algo != FederatedAlgo::kDpFtsDe) return;
    Eigen::MatrixXd w(p_regions_, n_);
    const double a_exp =
        o_.region_weights ? DeWeightExponent(t, o_.weight_hold, o_.weight_decay) : 1;
    for (int r = 0; r < p_regions_; ++r) {
      for (int m = 0; m < n_; ++m) w(r, m) = std::exp(agents_[m].region == r ? a_exp : 1.0);
      w.row(r) /= w.row(r).sum();
    }
    std::vector<Eigen::VectorXd> msgs(n_);
    for (int m = 0; m < n_; ++m) msgs[m] = agents_[m].message;
    const ServerRound s = AggregateMessages(msgs, w, o_.server, server_rng_);
    joint_ = s.joint;
    round->selected = s.selected;
    round->clipped = s.clipped;
  }

  const Eigen::MatrixXd& x_;
  const int n_;
  const std::function<double(int, int)>& evaluate_;
  const FederatedOptions& o_;
  const int p_regions_;
  const bo::StationaryKernel kernel_;
  const Eigen::MatrixXd kxx_, prior_chol_;
  Eigen::MatrixXd phi_;
  std::vector<int> region_;
  std::vector<std::vector<int>> region_rows_;
  std::vector<Agent> agents_;
  bo::Rng server_rng_;
  Eigen::MatrixXd joint_;                  // the server's broadcast [P, M]
  std::vector<Eigen::VectorXd> previous_;  // every agent's message of the last round (FTS)
};

}  // namespace

void FederatedOptions::Validate() const {
  if (rounds < 1 || initial_points < 1 || features < 1)
    throw std::invalid_argument("RunFederated: rounds, initial points and features must be >= 1");
  if (!(lengthscale > 0) || !(signal_variance > 0) || !(noise_variance > 0))
    throw std::invalid_argument("RunFederated: lengthscale, signal and noise variance must be > 0");
  if (algo == FederatedAlgo::kDpFtsDe && regions < 1)
    throw std::invalid_argument("RunFederated: P must be >= 1");
  FtsProbability(1, schedule, constant_p);
  DeWeightExponent(1, weight_hold, weight_decay);
}

std::vector<FederatedRound> RunFederated(
    const Eigen::MatrixXd& x, int n, const std::function<double(int, int)>& evaluate,
    const FederatedOptions& o, uint64_t seed,
    const std::function<bool(const FederatedRound&)>& on_round) {
  CheckFederated(x, n, o);
  FederatedRun run(x, n, evaluate, o, seed);
  std::vector<FederatedRound> out;
  out.push_back(run.InitialRound());
  if (on_round && !on_round(out.back())) return out;
  for (int t = 1; t <= o.rounds; ++t) {
    out.push_back(run.Round(t));
    if (on_round && !on_round(out.back())) break;
  }
  return out;
}

}  // namespace advbo::algorithms
