#include "algorithms/macro_bo/macro_bo.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>

#include "bo/acquisition.h"
#include "bo/clock.h"
#include "bo/enum_names.h"
#include "bo/gp.h"

namespace advbo::algorithms {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Salt of the observation-noise stream (separate from the planner's samples).
constexpr uint64_t kNoiseSalt = 0x4E4F495345ULL;  // "NOISE"

double Dot(const double* a, const double* b, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

int ArgMax(const Eigen::VectorXd& v) {
  Eigen::Index i = 0;
  v.maxCoeff(&i);
  return static_cast<int>(i);
}

}  // namespace

namespace {
constexpr bo::NamedValue<MacroAlgo> kMacroAlgoNames[] = {
    {MacroAlgo::kEMacro, "emacro"},
    {MacroAlgo::kAnytime, "anytime"},
    {MacroAlgo::kNonmyopicUcb, "nonmyopic-ucb"},
    {MacroAlgo::kGpBucb, "gp-bucb"}};
}  // namespace

MacroAlgo ParseMacroAlgo(const std::string& name) {
  return bo::ParseNamed(kMacroAlgoNames, name, "macro algorithm");
}

std::string MacroAlgoName(MacroAlgo algo) { return bo::NameOf(kMacroAlgoNames, algo); }

void MacroOptions::Validate() const {
  const MacroOptions& o = *this;
  if (o.horizon < 1) throw std::invalid_argument("horizon H must be >= 1");
  if (o.samples < 1) throw std::invalid_argument("samples N must be >= 1");
  if (!(o.beta >= 0) || !std::isfinite(o.beta))
    throw std::invalid_argument("exploration weight beta must be a finite number >= 0");
  if (!(o.epsilon > 0) || !std::isfinite(o.epsilon))
    throw std::invalid_argument("loss bound epsilon must be a finite number > 0");
  if (o.anytime_iterations < 1) throw std::invalid_argument("anytime iterations must be >= 1");
  if (!(o.bucb_delta > 0 && o.bucb_delta < 1))
    throw std::invalid_argument("GP-BUCB delta must lie in (0, 1)");
}

// ---------------------------------------------------------------- FieldBelief

FieldBelief::FieldBelief(const MacroDomain& domain, const FieldPrior& prior)
    : domain_(&domain), prior_(prior) {
  if (!(prior.lengthscale1 > 0) || !(prior.lengthscale2 > 0) || !(prior.signal_variance > 0) ||
      !(prior.noise_variance > 0))
    throw std::invalid_argument("field prior: lengthscales and variances must be > 0");
  if (domain.locations.cols() != 2 ||
      static_cast<size_t>(domain.locations.rows()) != domain.actions.size())
    throw std::invalid_argument("field domain: locations must be [M, 2] with M action lists");
}

double FieldBelief::Kernel(int a, int b) const {
  return FieldKernel(prior_, domain_->locations, a, b);
}

void FieldBelief::Observe(int loc, double y) {
  if (loc < 0 || loc >= domain_->locations.rows())
    throw std::invalid_argument("FieldBelief::Observe: location outside the domain");
  locs_.push_back(loc);
  const int n = static_cast<int>(locs_.size());
  y_.conservativeResize(n);
  y_(n - 1) = y;
  Eigen::MatrixXd k(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) k(i, j) = k(j, i) = Kernel(locs_[i], locs_[j]);
  k.diagonal().array() += prior_.noise_variance;
  double jitter = 0;
  chol_ = bo::CholeskyWithJitter(k, &jitter);
  u_ = chol_.triangularView<Eigen::Lower>().solve((y_.array() - prior_.mean).matrix());
}

double FieldBelief::Mean(int loc) const {
  if (locs_.empty()) return prior_.mean;
  Eigen::VectorXd k(locs_.size());
  for (size_t i = 0; i < locs_.size(); ++i) k(i) = Kernel(loc, locs_[i]);
  return prior_.mean + chol_.triangularView<Eigen::Lower>().solve(k).dot(u_);
}

double FieldBelief::Variance(int loc) const { return std::max(0.0, Covariance(loc, loc)); }

double FieldBelief::Covariance(int a, int b) const {
  if (locs_.empty()) return Kernel(a, b);
  Eigen::VectorXd ka(locs_.size()), kb(locs_.size());
  for (size_t i = 0; i < locs_.size(); ++i)
    ka(i) = Kernel(a, locs_[i]), kb(i) = Kernel(b, locs_[i]);
  const auto l = chol_.triangularView<Eigen::Lower>();
  return Kernel(a, b) - l.solve(ka).dot(l.solve(kb));
}

// ---------------------------------------------------------------- PathTree

double PathTree::Reward(int c, const double* hist, int hist_len) const {
  const PathNode& n = nodes[c];
  const int len = std::min(hist_len, static_cast<int>(n.w.size()));
  return n.mean_sum + 0.5 * beta * n.info + Dot(n.w.data(), hist, len);
}

namespace {

// Depth-first construction: x = locations of D and the path so far, lx the Cholesky factor of
// K(x, x) + sigma_n^2 I (block lower triangular; its blocks after D are the parents' Psi).
void Grow(const FieldBelief& belief, PathTree& tree, int node, const std::vector<int>& x,
          const Eigen::MatrixXd& lx) {
  const MacroDomain& dom = belief.domain();
  const FieldPrior& pr = belief.prior();
  const int kappa = tree.kappa;
  const int n_data = static_cast<int>(belief.observed().size());
  const int n = static_cast<int>(x.size());
  const int depth = tree.nodes[node].depth;
  const auto& acts = dom.actions[tree.nodes[node].end];
  for (size_t a = 0; a < acts.size(); ++a) {
    const std::vector<int>& pts = acts[a];
    if (static_cast<int>(pts.size()) != kappa)
      throw std::invalid_argument("macro-action of length " + std::to_string(pts.size()) +
                                  " in a domain with kappa = " + std::to_string(kappa));
    PathNode c;
    c.parent = node;
    c.depth = depth + 1;
    c.action = static_cast<int>(a);
    c.end = pts.back();
    c.points = pts;
    Eigen::MatrixXd kxp(n, kappa), kpp(kappa, kappa);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < kappa; ++j) kxp(i, j) = belief.Kernel(x[i], pts[j]);
    for (int i = 0; i < kappa; ++i)
      for (int j = 0; j < kappa; ++j) kpp(i, j) = belief.Kernel(pts[i], pts[j]);
    kpp.diagonal().array() += pr.noise_variance;
    Eigen::MatrixXd b(n, kappa);
    if (n > 0) b = lx.triangularView<Eigen::Lower>().solve(kxp);
    Eigen::MatrixXd cov = kpp;
    if (n > 0) cov.noalias() -= b.transpose() * b;
    double jitter = 0;
    c.chol = bo::CholeskyWithJitter(0.5 * (cov + cov.transpose()), &jitter);
    const Eigen::VectorXd b1 = n > 0 ? Eigen::VectorXd(b.rowwise().sum()) : Eigen::VectorXd();
    c.mean_sum = kappa * pr.mean;
    if (n_data > 0) c.mean_sum += b1.head(n_data).dot(belief.whitened());
    c.w = Eigen::Map<const Eigen::MatrixXd>(b1.data() + n_data, kappa, depth);
    c.info = c.chol.diagonal().array().log().sum() - 0.5 * kappa * std::log(pr.noise_variance);
    c.alpha = n > 0 ? lx.transpose().triangularView<Eigen::Upper>().solve(b).norm() : 0.0;
    const int id = static_cast<int>(tree.nodes.size());
    tree.nodes.push_back(std::move(c));
    tree.nodes[node].children.push_back(id);
    if (depth + 1 < tree.horizon) {
      Eigen::MatrixXd lx2 = Eigen::MatrixXd::Zero(n + kappa, n + kappa);
      lx2.topLeftCorner(n, n) = lx;
      if (n > 0) lx2.bottomLeftCorner(kappa, n) = b.transpose();
      lx2.bottomRightCorner(kappa, kappa) = tree.nodes[id].chol;
      std::vector<int> x2 = x;
      x2.insert(x2.end(), pts.begin(), pts.end());
      Grow(belief, tree, id, x2, lx2);
    }
  }
}

// Post-order: L (Definition B.1), theta (B.24/B.27) and Q_likely (eq. 4.8, beta included).
void Summarise(PathTree& tree, int node) {
  for (int c : tree.nodes[node].children) Summarise(tree, c);
  PathNode& p = tree.nodes[node];
  if (node == 0) return;
  const double kappa = tree.kappa;
  double lip = 0.0, theta_next = 0.0, likely_next = 0.0;
  bool any = false;
  for (int c : p.children) {
    const PathNode& q = tree.nodes[c];
    lip =
        std::max(lip, std::sqrt(kappa) * q.alpha + q.lipschitz * std::sqrt(1 + q.alpha * q.alpha));
    theta_next = std::max(theta_next, q.theta);
    likely_next = any ? std::max(likely_next, q.likely) : q.likely;
    any = true;
  }
  p.lipschitz = lip;  // 0 at depth H (V*_H = 0) and at dead ends
  p.theta = any ? lip * std::sqrt(kappa * p.chol.squaredNorm()) + theta_next : 0.0;
  p.likely = p.mean_sum + 0.5 * tree.beta * p.info + likely_next;
}

}  // namespace

PathTree BuildPathTree(const FieldBelief& belief, int location, int horizon, double beta) {
  if (horizon < 1) throw std::invalid_argument("BuildPathTree: horizon must be >= 1");
  if (location < 0 || location >= belief.domain().locations.rows())
    throw std::invalid_argument("BuildPathTree: location outside the domain");
  PathTree tree;
  tree.kappa = belief.domain().kappa;
  tree.horizon = horizon;
  tree.beta = beta;
  PathNode root;
  root.end = location;
  tree.nodes.push_back(root);
  Grow(belief, tree, 0, belief.observed(), belief.chol());
  Summarise(tree, 0);
  return tree;
}

// ---------------------------------------------------------------- planners

namespace {

// The sampling tree of eq. 4.6 over whitened innovations.
class StochasticPlanner {
 public:
  StochasticPlanner(const PathTree& tree, int samples, bo::Rng& rng)
      : tree_(tree), n_(samples), rng_(rng) {}

  // Q~_t(c, d_t) for action node c below a circle node whose innovations are hist [t kappa].
  double Q(int c, std::vector<double>& hist) {
    const int kappa = tree_.kappa;
    const int len = static_cast<int>(hist.size());
    const PathNode& node = tree_.nodes[c];
    const double r = tree_.Reward(c, hist.data(), len);
    if (node.depth >= tree_.horizon || node.children.empty()) return r;  // V_{t+1} = 0
    double acc = 0.0;
    hist.resize(len + kappa);
    double* z = hist.data() + len;
    if (node.depth == tree_.horizon - 1) {
      // The children's circle nodes are the last stage: V = max_g R_g, affine in z.
      const size_t a = node.children.size();
      pre_.resize(a);
      for (size_t g = 0; g < a; ++g) pre_[g] = tree_.Reward(node.children[g], hist.data(), len);
      for (int l = 0; l < n_; ++l) {
        for (int k = 0; k < kappa; ++k) z[k] = normal_(rng_);
        double best = -kInf;
        for (size_t g = 0; g < a; ++g) {
          const PathNode& leaf = tree_.nodes[node.children[g]];
          best = std::max(best, pre_[g] + Dot(leaf.w.data() + len, z, kappa));
        }
        acc += best;
        nodes_ += 1 + static_cast<long long>(a);
      }
    } else {
      for (int l = 0; l < n_; ++l) {
        for (int k = 0; k < kappa; ++k) hist[len + k] = normal_(rng_);
        acc += V(c, hist);
      }
    }
    hist.resize(len);
    return r + acc / n_;
  }

  // V~ of the circle node after path node `path` with innovations hist.
  double V(int path, std::vector<double>& hist) {
    const PathNode& node = tree_.nodes[path];
    nodes_ += 1 + static_cast<long long>(node.children.size());
    double best = node.children.empty() ? 0.0 : -kInf;
    for (int c : node.children) best = std::max(best, Q(c, hist));
    return best;
  }

  long long nodes() const { return nodes_; }

 private:
  const PathTree& tree_;
  int n_;
  bo::Rng& rng_;
  std::normal_distribution<double> normal_{0.0, 1.0};
  std::vector<double> pre_;
  long long nodes_ = 0;
};

// Anytime epsilon-Macro-BO (Alg. 4): a partially expanded sampling tree with heuristic bounds.
class AnytimePlanner {
 public:
  AnytimePlanner(const PathTree& tree, int samples, double lambda, bo::Rng& rng)
      : tree_(tree), n_(samples), lambda_(lambda), rng_(rng) {
    nodes_.push_back(Node{0, {}, false, 0.0, 0.0, {}});
  }

  // One ConstructTree(0, d_0) call (Alg. 4 line 45).
  void Iterate() { Construct(0); }

  double RootLower(int k) const { return nodes_[0].br[k].qlb; }
  double RootUpper() const { return nodes_[0].ub; }
  double RootLowerV() const { return nodes_[0].lb; }
  long long count() const { return count_; }

 private:
  struct Branch {
    int path = 0;                // action node c
    Eigen::MatrixXd z;           // [kappa, N] whitened samples (empty: V_{t+1} = 0 exactly)
    std::vector<int> child;      // node id per sample (-1 = unexplored)
    std::vector<double> lb, ub;  // bounds of V*_{t+1} per sample
    double r = 0, qlb = 0, qub = 0;
  };
  struct Node {
    int path;
    std::vector<double> hist;
    bool explored;
    double lb, ub;
    std::vector<Branch> br;
  };

  // V_likely (eq. 4.8) of the circle node after `path` given innovations hist.
  double Likely(int path, const double* hist, int len) const {
    const PathNode& p = tree_.nodes[path];
    if (p.children.empty()) return 0.0;
    double best = -kInf;
    for (int c : p.children)
      best = std::max(best, tree_.Reward(c, hist, len) + Likely(c, hist, len));
    return best;
  }

  double ChildTheta(int c) const {
    double t = 0.0;
    for (int g : tree_.nodes[c].children) t = std::max(t, tree_.nodes[g].theta);
    return t;
  }

  // Alg. 4 lines 19-23 (Corollary 1): Lipschitz refinement of sample i's siblings.
  void Refine(Branch& b, int j) {
    const PathNode& c = tree_.nodes[b.path];
    for (int i = 0; i < n_; ++i) {
      if (i == j) continue;
      const double d = c.lipschitz * (c.chol * (b.z.col(i) - b.z.col(j))).norm();
      b.lb[i] = std::max(b.lb[i], b.lb[j] - d);
      b.ub[i] = std::min(b.ub[i], b.ub[j] + d);
    }
  }

  void UpdateQ(Branch& b) const {
    if (b.z.size() == 0) {
      b.qlb = b.r - lambda_;
      b.qub = b.r + lambda_;
      return;
    }
    double sl = 0, su = 0;
    for (int l = 0; l < n_; ++l) sl += b.lb[l], su += b.ub[l];
    b.qlb = b.r + sl / n_ - lambda_;
    b.qub = b.r + su / n_ + lambda_;
  }

  void UpdateV(int id) {
    Node& nd = nodes_[id];
    nd.lb = nd.br.empty() ? 0.0 : -kInf;
    nd.ub = nd.br.empty() ? 0.0 : -kInf;
    for (const Branch& b : nd.br) nd.lb = std::max(nd.lb, b.qlb), nd.ub = std::max(nd.ub, b.qub);
  }

  int NewChild(int id, int k, int l) {
    const Branch& b = nodes_[id].br[k];
    Node child{b.path, nodes_[id].hist, false, 0.0, 0.0, {}};
    child.hist.insert(child.hist.end(), b.z.col(l).data(), b.z.col(l).data() + tree_.kappa);
    nodes_.push_back(std::move(child));
    const int cid = static_cast<int>(nodes_.size()) - 1;
    nodes_[id].br[k].child[l] = cid;
    return cid;
  }

  // ExpandTree (Alg. 4 lines 1-17).
  void Expand(int id) {
    const int path = nodes_[id].path;
    const PathNode& p = tree_.nodes[path];
    nodes_[id].explored = true;
    if (p.depth >= tree_.horizon || p.children.empty()) {
      UpdateV(id);
      return;
    }
    count_ += 1 + static_cast<long long>(p.children.size());
    nodes_[id].br.resize(p.children.size());
    for (size_t k = 0; k < p.children.size(); ++k) {
      const int c = p.children[k];
      const PathNode& cn = tree_.nodes[c];
      std::vector<double> h = nodes_[id].hist;
      const int len = static_cast<int>(h.size());
      Branch b;
      b.path = c;
      b.r = tree_.Reward(c, h.data(), len);
      if (cn.depth < tree_.horizon && !cn.children.empty()) {
        b.z.resize(tree_.kappa, n_);
        for (int l = 0; l < n_; ++l)
          for (int q = 0; q < tree_.kappa; ++q) b.z(q, l) = normal_(rng_);
        b.child.assign(n_, -1);
        b.lb.resize(n_);
        b.ub.resize(n_);
        const double th = ChildTheta(c);
        h.resize(len + tree_.kappa);
        int likely = 0;
        double best_dist = kInf;
        for (int l = 0; l < n_; ++l) {
          std::copy(b.z.col(l).data(), b.z.col(l).data() + tree_.kappa, h.data() + len);
          const double v = Likely(c, h.data(), len + tree_.kappa);
          b.lb[l] = v - th;
          b.ub[l] = v + th;
          const double dist = (cn.chol * b.z.col(l)).norm();  // ||y^l - mu_t(x_{t+1})||
          if (dist < best_dist) best_dist = dist, likely = l;
        }
        nodes_[id].br[k] = std::move(b);
        const int cid = NewChild(id, static_cast<int>(k), likely);
        Expand(cid);
        Branch& bb = nodes_[id].br[k];
        bb.lb[likely] = nodes_[cid].lb;
        bb.ub[likely] = nodes_[cid].ub;
        Refine(bb, likely);
      } else {
        nodes_[id].br[k] = std::move(b);
      }
      UpdateQ(nodes_[id].br[k]);
    }
    UpdateV(id);
  }

  // ConstructTree (Alg. 4 lines 24-38).
  void Construct(int id) {
    if (!nodes_[id].explored) {
      Expand(id);
      return;
    }
    if (nodes_[id].br.empty()) return;
    int k = 0;
    for (size_t j = 1; j < nodes_[id].br.size(); ++j)
      if (nodes_[id].br[j].qlb > nodes_[id].br[k].qlb) k = static_cast<int>(j);
    if (nodes_[id].br[k].z.size() == 0) return;  // last stage: bounds already exact
    int l = 0;
    {
      const Branch& b = nodes_[id].br[k];
      for (int q = 1; q < n_; ++q)
        if (b.ub[q] - b.lb[q] > b.ub[l] - b.lb[l]) l = q;
    }
    int cid = nodes_[id].br[k].child[l];
    if (cid < 0) cid = NewChild(id, k, l);
    Construct(cid);
    Branch& b = nodes_[id].br[k];
    b.lb[l] = nodes_[cid].lb;
    b.ub[l] = nodes_[cid].ub;
    Refine(b, l);
    UpdateQ(b);
    UpdateV(id);
  }

  const PathTree& tree_;
  int n_;
  double lambda_;
  bo::Rng& rng_;
  std::normal_distribution<double> normal_{0.0, 1.0};
  std::deque<Node> nodes_;
  long long count_ = 0;
};

MacroPlan PlanGpBucb(const FieldBelief& belief, int location, const MacroOptions& o) {
  const MacroDomain& dom = belief.domain();
  const auto& acts = dom.actions[location];
  MacroPlan plan;
  const int a = static_cast<int>(acts.size());
  plan.q = Eigen::VectorXd::Zero(a);
  plan.q_likely = Eigen::VectorXd::Zero(a);
  if (a == 0) return plan;
  const bo::ExplorationWeight weight{bo::BetaPolicy::kSrinivas2010, 0.0, o.bucb_delta};
  const double domain_size = static_cast<double>(dom.locations.rows());
  const int t0 = static_cast<int>(belief.observed().size());
  FieldBelief hallucinated = belief;
  std::vector<int> cand(a);
  for (int i = 0; i < a; ++i) cand[i] = i;
  for (int pos = 0; pos < dom.kappa; ++pos) {
    const double sb = std::sqrt(weight.Beta(t0 + pos, 2, domain_size));
    int best_loc = -1;
    double best = -kInf;
    for (int i : cand) {
      const int loc = acts[i][pos];
      const double u = hallucinated.Mean(loc) + sb * std::sqrt(hallucinated.Variance(loc));
      if (pos == 0) plan.q(i) = u;
      if (u > best) best = u, best_loc = loc;
      ++plan.nodes;
    }
    std::vector<int> keep;
    for (int i : cand)
      if (acts[i][pos] == best_loc) keep.push_back(i);
    cand = keep;
    // GP-BUCB hallucination: the mean stays, the variance shrinks.
    hallucinated.Observe(best_loc, hallucinated.Mean(best_loc));
  }
  plan.action = cand.front();
  return plan;
}

}  // namespace

double MacroTreeNodes(int actions, int samples, int horizon) {
  double sum = 0, power = 1;
  for (int t = 0; t < horizon; ++t) sum += power, power *= static_cast<double>(actions) * samples;
  return (1.0 + actions) * sum;
}

MacroPlan PlanMacroAction(const FieldBelief& belief, int location, int horizon,
                          const MacroOptions& o, bo::Rng& rng) {
  o.Validate();
  if (horizon < 1) throw std::invalid_argument("planning horizon must be >= 1");
  if (o.algo == MacroAlgo::kGpBucb) return PlanGpBucb(belief, location, o);
  const PathTree tree = BuildPathTree(belief, location, horizon, o.beta);
  const PathNode& root = tree.nodes[0];
  const int a = static_cast<int>(root.children.size());
  MacroPlan plan;
  plan.q.resize(a);
  plan.q_likely.resize(a);
  if (a == 0) return plan;
  for (int k = 0; k < a; ++k) {
    plan.q_likely(k) = tree.nodes[root.children[k]].likely;
    plan.theta = std::max(plan.theta, tree.nodes[root.children[k]].theta);
  }
  switch (o.algo) {
    case MacroAlgo::kNonmyopicUcb: {
      plan.q = plan.q_likely;
      plan.nodes = 0;
      for (const PathNode& p : tree.nodes)
        if (p.depth < horizon) plan.nodes += 1 + static_cast<long long>(p.children.size());
      break;
    }
    case MacroAlgo::kEMacro: {
      StochasticPlanner sp(tree, o.samples, rng);
      std::vector<double> hist;
      for (int k = 0; k < a; ++k) plan.q(k) = sp.Q(root.children[k], hist);
      plan.nodes = sp.nodes() + 1 + a;
      // eq. 4.9: keep Q~ only where it is boundedly close to Q_likely.
      const double lambda = o.epsilon / (4.0 * horizon * horizon);
      for (int k = 0; k < a; ++k)
        if (std::abs(plan.q(k) - plan.q_likely(k)) > lambda * horizon + plan.theta) {
          plan.q(k) = plan.q_likely(k);
          ++plan.fallbacks;
        }
      break;
    }
    case MacroAlgo::kAnytime: {
      const double lambda = plan.theta > 0
                                ? 1.0 / (4.0 * horizon / o.epsilon + 1.0 / (2.0 * plan.theta))
                                : o.epsilon / (4.0 * horizon);
      AnytimePlanner ap(tree, o.samples, lambda, rng);
      for (int i = 0; i < o.anytime_iterations; ++i) ap.Iterate();
      plan.omega = ap.RootUpper() - ap.RootLowerV();
      plan.nodes = ap.count();
      for (int k = 0; k < a; ++k) {  // eq. 4.12
        plan.q(k) = ap.RootLower(k);
        if (std::abs(plan.q(k) - plan.q_likely(k)) > 2 * lambda + plan.omega + plan.theta) {
          plan.q(k) = plan.q_likely(k);
          ++plan.fallbacks;
        }
      }
      break;
    }
    case MacroAlgo::kGpBucb:
      break;
  }
  plan.action = ArgMax(plan.q);
  return plan;
}

MacroEpisode RunMacroEpisode(const MacroField& field, const MacroOptions& o, uint64_t seed,
                             const std::function<void(const MacroStep&)>& on_step) {
  o.Validate();
  const MacroDomain& dom = field.domain;
  const int m = static_cast<int>(dom.locations.rows());
  if (field.f.size() != m) throw std::invalid_argument("field: f must have one value per location");
  if (field.start < 0 || field.start >= m) throw std::invalid_argument("field: start outside");
  if (field.budget < dom.kappa || field.budget % dom.kappa != 0)
    throw std::invalid_argument("field: budget must be a positive multiple of kappa");
  FieldBelief belief(dom, field.prior);
  const double sn = std::sqrt(field.prior.noise_variance);
  const uint64_t noise_seed = bo::DeriveSeed(seed, kNoiseSalt);
  std::map<int, int> visits;
  auto observe = [&](int loc) {
    const int k = visits[loc]++;
    bo::Rng r(bo::DeriveSeed(noise_seed, static_cast<uint64_t>(loc) * 4096 + k));
    std::normal_distribution<double> normal(0.0, 1.0);
    const double y = field.f(loc) + sn * normal(r);
    belief.Observe(loc, y);
    return y;
  };
  MacroEpisode ep;
  const double f_max = field.f.maxCoeff();
  double best_f = field.f(field.start), sum = 0.0;
  int count = 0;
  observe(field.start);
  ep.avg_output_curve.push_back(0.0);
  ep.regret_curve.push_back(f_max - best_f);
  bo::Rng rng(bo::DeriveSeed(seed, 7));
  const int iterations = field.budget / dom.kappa;
  int at = field.start;
  for (int it = 0; it < iterations; ++it) {
    if (dom.actions[at].empty()) break;
    MacroStep step;
    step.iteration = it;
    step.from = at;
    step.horizon = std::min(o.horizon, iterations - it);
    const auto t0 = bo::Clock::now();
    const MacroPlan plan = PlanMacroAction(belief, at, step.horizon, o, rng);
    step.seconds = bo::SecondsSince(t0);
    step.action = plan.action;
    step.nodes = plan.nodes;
    step.fallbacks = plan.fallbacks;
    step.theta = plan.theta;
    step.omega = plan.omega;
    step.points = dom.actions[at][plan.action];
    for (int loc : step.points) {
      const double y = observe(loc);
      step.y.push_back(y);
      sum += y - field.prior.mean;
      ++count;
      best_f = std::max(best_f, field.f(loc));
      ep.avg_output_curve.push_back(sum / count);
      ep.regret_curve.push_back(f_max - best_f);
    }
    at = step.points.back();
    ep.nodes += step.nodes;
    ep.seconds += step.seconds;
    if (on_step) on_step(step);
    ep.steps.push_back(std::move(step));
  }
  // A dead end stops early: the curves stay flat for the observations not gathered.
  while (static_cast<int>(ep.avg_output_curve.size()) < field.budget + 1) {
    ep.avg_output_curve.push_back(ep.avg_output_curve.back());
    ep.regret_curve.push_back(ep.regret_curve.back());
  }
  ep.avg_normalized_output = ep.avg_output_curve.back();
  ep.simple_regret = ep.regret_curve.back();
  return ep;
}

}  // namespace advbo::algorithms
