#include "attacks/parsimonious/parsimonious.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace advbo::attacks {
namespace {

// A block: one channel, rows [r0, r1), columns [c0, c1).
struct Block {
  int ch, r0, r1, c0, c1;
};

std::vector<Block> MakeBlocks(int c, int h, int w, int k) {
  std::vector<Block> b;
  for (int ch = 0; ch < c; ++ch)
    for (int r = 0; r < h; r += k)
      for (int col = 0; col < w; col += k)
        b.push_back({ch, r, std::min(h, r + k), col, std::min(w, col + k)});
  return b;
}

// One run of the Parsimonious attack (Moon, An, Song, ICML 2019, Algorithm 1: lazy greedy
// insertion and deletion of blocks on the vertices of the eps-ball, coarse to fine): the
// current vertex (a sign per pixel, all -eps at the start) and its objective f.
class ParsimoniousRun {
 public:
  ParsimoniousRun(oracle::QueryOracle& oracle, const ParsimoniousOptions& o, bo::Rng& rng,
                  const AttackProgress& progress)
      : oracle_(oracle),
        o_(o),
        rng_(rng),
        progress_(progress),
        c_(oracle.model().channels()),
        h_(oracle.model().height()),
        w_(oracle.model().width()),
        x0_(oracle.clean()),
        d_(x0_.size()),
        eps_(static_cast<float>(oracle.query_radius())),
        sign_(d_, -1) {}

  // Algorithm 1's outer loop: block sizes initial_block, /2, ..., 1, up to max_passes of
  // insertion + deletion each, until success or the budget is spent.
  void Run() {
    const std::vector<double> f0 = Evaluate({sign_});
    if (f0.empty()) return;
    f_ = f0[0];
    for (int k = o_.initial_block; Going(); k = std::max(1, k / 2)) {
      const std::vector<Block> blocks = MakeBlocks(c_, h_, w_, k);
      for (int pass = 0; pass < o_.max_passes && Going(); ++pass) {
        const bool ins = LazyPass(blocks, -1);
        const bool del = Going() && LazyPass(blocks, +1);
        if (!ins && !del) break;
      }
      if (k == 1 && Going()) {
        // Finest level exhausted without improvement: restart the passes (the objective may
        // still improve after the other moves); stop if nothing changes at all.
        const double before = f_;
        LazyPass(blocks, -1);
        if (f_ <= before) break;
      }
    }
  }

 private:
  bool Going() const { return oracle_.remaining() > 0 && !oracle_.succeeded(); }
  void Render(const std::vector<int8_t>& s, float* out) const {
    for (size_t k = 0; k < d_; ++k) out[k] = x0_[k] + (s[k] > 0 ? eps_ : -eps_);
  }
  void SetBlock(std::vector<int8_t>& s, const Block& b, int8_t v) const {
    for (int r = b.r0; r < b.r1; ++r)
      for (int col = b.c0; col < b.c1; ++col)
        s[(static_cast<size_t>(b.ch) * h_ + r) * w_ + col] = v;
  }
  int8_t BlockSign(const Block& b) const {
    return sign_[(static_cast<size_t>(b.ch) * h_ + b.r0) * w_ + b.c0];
  }
  // Objectives of candidate sign vectors, in batches of o.batch within the remaining budget
  // (fewer than asked when the budget ends or an attack succeeds).
  std::vector<double> Evaluate(const std::vector<std::vector<int8_t>>& cands) {
    std::vector<double> out;
    for (size_t s = 0; s < cands.size() && Going();) {
      const int n = static_cast<int>(std::min<long>(
          {static_cast<long>(o_.batch), static_cast<long>(cands.size() - s), oracle_.remaining()}));
      buf_.resize(n * d_);
      for (int i = 0; i < n; ++i) Render(cands[s + i], buf_.data() + i * d_);
      const Eigen::VectorXd y = oracle_.Query(buf_.data(), n).objective;
      for (int i = 0; i < n; ++i) out.push_back(y(i));
      s += n;
      if (progress_) progress_(oracle_.queries(), oracle_.best_objective());
    }
    return out;
  }
  // One lazy-greedy pass flipping blocks whose sign is `from` to -from (Algorithm 1's
  // insertion for from = -1, deletion for +1). Returns whether f improved.
  bool LazyPass(const std::vector<Block>& blocks, int8_t from) {
    std::vector<int> idx;
    for (int i = 0; i < static_cast<int>(blocks.size()); ++i)
      if (BlockSign(blocks[i]) == from) idx.push_back(i);
    std::shuffle(idx.begin(), idx.end(), rng_);  // tie-breaking, as the paper's random order
    std::vector<std::vector<int8_t>> cands;
    for (int i : idx) {
      cands.push_back(sign_);
      SetBlock(cands.back(), blocks[i], static_cast<int8_t>(-from));
    }
    const std::vector<double> y = Evaluate(cands);
    // Max-heap of (upper bound on the gain, block, version at which it was exact).
    using Entry = std::tuple<double, int, long>;
    std::priority_queue<Entry> heap;
    long version = 0;
    for (size_t j = 0; j < y.size(); ++j) heap.emplace(y[j] - f_, idx[j], version);
    bool improved = false;
    while (!heap.empty() && Going()) {
      auto [gain, i, ver] = heap.top();
      heap.pop();
      if (gain <= 0) break;
      if (ver != version) {  // stale bound: re-measure against the current set (1 query)
        std::vector<std::vector<int8_t>> c1(1, sign_);
        SetBlock(c1[0], blocks[i], static_cast<int8_t>(-from));
        const std::vector<double> yy = Evaluate(c1);
        if (yy.empty()) break;
        const double g = yy[0] - f_;
        if (!heap.empty() && g < std::get<0>(heap.top())) {
          heap.emplace(g, i, version);
          continue;
        }
        gain = g;
        if (gain <= 0) continue;
      }
      SetBlock(sign_, blocks[i], static_cast<int8_t>(-from));
      f_ += gain;
      ++version;
      improved = true;
    }
    return improved;
  }

  oracle::QueryOracle& oracle_;
  const ParsimoniousOptions& o_;
  bo::Rng& rng_;
  const AttackProgress& progress_;
  const int c_, h_, w_;
  const std::vector<float>& x0_;
  const size_t d_;
  const float eps_;
  std::vector<int8_t> sign_;
  double f_ = 0;
  std::vector<float> buf_;
};

}  // namespace

void ParsimoniousOptions::Validate() const {
  if (initial_block < 1) throw std::invalid_argument("Parsimonious: initial_block must be >= 1");
  if (batch < 1) throw std::invalid_argument("Parsimonious: batch must be >= 1");
  if (max_passes < 1) throw std::invalid_argument("Parsimonious: max_passes must be >= 1");
}

AttackResult ParsimoniousAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                                     const AttackProgress& progress) const {
  options_.Validate();
  const double t0 = NowSeconds();
  ParsimoniousRun(oracle, options_, rng, progress).Run();
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
