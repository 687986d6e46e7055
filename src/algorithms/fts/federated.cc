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

std::vector<FederatedRound> RunFederated(
    const Eigen::MatrixXd& x, int n, const std::function<double(int, int)>& evaluate,
    const FederatedOptions& o, uint64_t seed,
    const std::function<bool(const FederatedRound&)>& on_round) {
  const Eigen::Index k = x.rows();
  if (k < 1 || n < 1) throw std::invalid_argument("RunFederated: need a domain and >= 1 agent");
  if (o.rounds < 1 || o.initial_points < 1 || o.features < 1)
    throw std::invalid_argument("RunFederated: rounds, initial points and features must be >= 1");
  if (!(o.lengthscale > 0) || !(o.signal_variance > 0) || !(o.noise_variance > 0))
    throw std::invalid_argument("RunFederated: lengthscale, signal and noise variance must be > 0");
  if (o.algo == FederatedAlgo::kFts && n < 2)
    throw std::invalid_argument("RunFederated: FTS needs at least 2 agents");
  const int p_regions = o.algo == FederatedAlgo::kDpFtsDe ? o.regions : 1;
  if (p_regions < 1) throw std::invalid_argument("RunFederated: P must be >= 1");
  FtsProbability(1, o.schedule, o.constant_p);
  DeWeightExponent(1, o.weight_hold, o.weight_decay);

  // Shared: the domain kernel and its prior Cholesky, the features, the regions.
  bo::StationaryKernel kernel(bo::KernelFamily::kSquaredExponential, static_cast<int>(x.cols()),
                              false, {}, o.lengthscale, o.signal_variance);
  const Eigen::MatrixXd kxx = kernel.Eval(x, x);
  Eigen::MatrixXd prior_chol;
  for (double jitter = 1e-10;; jitter *= 10) {
    Eigen::MatrixXd kj = kxx;
    kj.diagonal().array() += jitter * o.signal_variance;
    Eigen::LLT<Eigen::MatrixXd> llt(kj);
    if (llt.info() == Eigen::Success) {
      prior_chol = llt.matrixL();
      break;
    }
    if (jitter > 1e-2) throw std::runtime_error("RunFederated: the domain kernel is not PD");
  }
  bo::Rng feature_rng(bo::DeriveSeed(seed, kFeatureSalt));
  const bo::RandomFeatures rf(kernel, o.features, feature_rng);
  const Eigen::MatrixXd phi = NormalizedFeatures(rf, x, o.signal_variance);
  const std::vector<int> region = DomainRegions(x, p_regions);
  std::vector<std::vector<int>> region_rows(p_regions);
  for (Eigen::Index i = 0; i < k; ++i) region_rows[region[i]].push_back(static_cast<int>(i));
  if (o.local_init)
    for (const auto& rows : region_rows)
      if (rows.empty()) throw std::invalid_argument("RunFederated: a sub-region holds no point");

  std::vector<Agent> agents(n);
  for (int a = 0; a < n; ++a) {
    agents[a].rng.seed(bo::DeriveSeed(seed, static_cast<uint64_t>(a)));
    agents[a].region = a % p_regions;
  }
  bo::Rng server_rng(bo::DeriveSeed(seed, kServerSalt));
  Eigen::MatrixXd joint;                  // the server's broadcast [P, M]
  std::vector<Eigen::VectorXd> previous;  // every agent's message of the last round (FTS)

  auto send = [&](Agent& a) {
    Eigen::MatrixXd pa(a.idx.size(), phi.cols());
    for (size_t j = 0; j < a.idx.size(); ++j) pa.row(j) = phi.row(a.idx[j]);
    const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(a.y.data(), a.y.size());
    a.message = FeaturePosterior(pa, y, o.noise_variance).Sample(a.rng);
  };
  auto serve = [&](int t, FederatedRound* round) {
    if (o.algo != FederatedAlgo::kDpFtsDe) return;
    Eigen::MatrixXd w(p_regions, n);
    const double a_exp = o.region_weights ? DeWeightExponent(t, o.weight_hold, o.weight_decay) : 1;
    for (int r = 0; r < p_regions; ++r) {
      for (int m = 0; m < n; ++m) w(r, m) = std::exp(agents[m].region == r ? a_exp : 1.0);
      w.row(r) /= w.row(r).sum();
    }
    std::vector<Eigen::VectorXd> msgs(n);
    for (int m = 0; m < n; ++m) msgs[m] = agents[m].message;
    const ServerRound s = AggregateMessages(msgs, w, o.server, server_rng);
    joint = s.joint;
    round->selected = s.selected;
    round->clipped = s.clipped;
  };

  std::vector<FederatedRound> out;
  // t = 0: initial points (Alg. 6.2 line 2), then the first messages.
  {
    FederatedRound r0;
    r0.index.resize(n);
    r0.y.resize(n);
    r0.source.assign(n, -1);
    tbb::parallel_for(0, n, [&](int a) {
      Agent& ag = agents[a];
      const std::vector<int>* pool = o.local_init ? &region_rows[ag.region] : nullptr;
      const int size = pool ? static_cast<int>(pool->size()) : static_cast<int>(k);
      std::vector<int> order(size);
      for (int i = 0; i < size; ++i) order[i] = pool ? (*pool)[i] : i;
      const int m = std::min(o.initial_points, size);
      for (int i = 0; i < m; ++i) {
        std::uniform_int_distribution<int> pick(i, size - 1);
        std::swap(order[i], order[pick(ag.rng)]);
        ag.idx.push_back(order[i]);
        ag.y.push_back(evaluate(a, order[i]));
      }
      r0.index[a] = ag.idx.back();
      r0.y[a] = ag.y.back();
      send(ag);
    });
    serve(0, &r0);
    out.push_back(r0);
    if (on_round && !on_round(out.back())) return out;
  }
  for (int t = 1; t <= o.rounds; ++t) {
    previous.resize(n);
    for (int a = 0; a < n; ++a) previous[a] = agents[a].message;
    FederatedRound r;
    r.round = t;
    r.index.resize(n);
    r.y.resize(n);
    r.source.assign(n, -1);
    const double p = FtsProbability(t, o.schedule, o.constant_p);
    tbb::parallel_for(0, n, [&](int a) {
      Agent& ag = agents[a];
      std::uniform_real_distribution<double> u01(0.0, 1.0);
      const double u = u01(ag.rng);
      int i = 0;
      if (o.algo == FederatedAlgo::kTs || u <= p) {
        i = ArgMax(PosteriorDraw(kxx, prior_chol, ag, o.noise_variance, ag.rng));
      } else if (o.algo == FederatedAlgo::kFts) {
        std::uniform_int_distribution<int> pick(0, n - 2);
        int other = pick(ag.rng);
        if (other >= a) ++other;
        i = ArgMax(phi * previous[other]);
        r.source[a] = other;
      } else {
        Eigen::VectorXd v(k);
        for (Eigen::Index j = 0; j < k; ++j) v(j) = phi.row(j).dot(joint.row(region[j]));
        i = ArgMax(v);
        r.source[a] = -2;
      }
      ag.idx.push_back(i);
      ag.y.push_back(evaluate(a, i));
      r.index[a] = i;
      r.y[a] = ag.y.back();
      send(ag);
    });
    serve(t, &r);
    out.push_back(r);
    if (on_round && !on_round(out.back())) break;
  }
  return out;
}

}  // namespace advbo::algorithms
