#include "attacks/parsimonious/parsimonious.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <stdexcept>

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
      for (int col = 0; col < w; col += k) b.push_back({ch, r, std::min(h, r + k), col, std::min(w, col + k)});
  return b;
}

}  // namespace

AttackResult ParsimoniousAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                                     const AttackProgress& progress) const {
  const ParsimoniousOptions& o = options_;
  if (o.initial_block < 1 || o.batch < 1) throw std::invalid_argument("Parsimonious: bad options");
  const double t0 = NowSeconds();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const std::vector<float>& x0 = oracle.clean();
  const size_t d = x0.size();
  const float eps = static_cast<float>(oracle.query_radius());
  // Current vertex: sign per pixel (+1 / -1), all -eps at the start.
  std::vector<int8_t> sign(d, -1);
  auto render = [&](const std::vector<int8_t>& s, float* out) {
    for (size_t k = 0; k < d; ++k) out[k] = x0[k] + (s[k] > 0 ? eps : -eps);
  };
  auto set_block = [&](std::vector<int8_t>& s, const Block& b, int8_t v) {
    for (int r = b.r0; r < b.r1; ++r)
      for (int col = b.c0; col < b.c1; ++col) s[(static_cast<size_t>(b.ch) * h + r) * w + col] = v;
  };
  auto block_sign = [&](const Block& b) { return sign[(static_cast<size_t>(b.ch) * h + b.r0) * w + b.c0]; };
  // Objective of a list of candidate sign vectors (batched, within the remaining budget).
  std::vector<float> buf;
  auto evaluate = [&](const std::vector<std::vector<int8_t>>& cands) {
    std::vector<double> out;
    for (size_t s = 0; s < cands.size() && oracle.remaining() > 0 && !oracle.succeeded();) {
      const int n = static_cast<int>(std::min<long>({static_cast<long>(o.batch),
                                                     static_cast<long>(cands.size() - s), oracle.remaining()}));
      buf.resize(n * d);
      for (int i = 0; i < n; ++i) render(cands[s + i], buf.data() + i * d);
      const Eigen::VectorXd y = oracle.Query(buf.data(), n).objective;
      for (int i = 0; i < n; ++i) out.push_back(y(i));
      s += n;
      if (progress) progress(oracle.queries(), oracle.best_objective());
    }
    return out;
  };
  std::vector<std::vector<int8_t>> one(1, sign);
  std::vector<double> f0 = evaluate(one);
  if (f0.empty()) {
    AttackResult r;
    FinishResult(oracle, t0, &r);
    return r;
  }
  double f = f0[0];

  // One lazy-greedy pass flipping blocks whose sign is `from` to -from. Returns whether f improved.
  auto lazy_pass = [&](const std::vector<Block>& blocks, int8_t from) {
    std::vector<int> idx;
    for (int i = 0; i < static_cast<int>(blocks.size()); ++i)
      if (block_sign(blocks[i]) == from) idx.push_back(i);
    std::shuffle(idx.begin(), idx.end(), rng);  // tie-breaking, as the paper's random order
    std::vector<std::vector<int8_t>> cands;
    for (int i : idx) {
      cands.push_back(sign);
      set_block(cands.back(), blocks[i], static_cast<int8_t>(-from));
    }
    const std::vector<double> y = evaluate(cands);
    // Max-heap of (upper bound on the gain, block, version at which it was exact).
    using Entry = std::tuple<double, int, long>;
    std::priority_queue<Entry> heap;
    long version = 0;
    for (size_t j = 0; j < y.size(); ++j) heap.emplace(y[j] - f, idx[j], version);
    bool improved = false;
    while (!heap.empty() && oracle.remaining() > 0 && !oracle.succeeded()) {
      auto [gain, i, ver] = heap.top();
      heap.pop();
      if (gain <= 0) break;
      if (ver != version) {  // stale bound: re-measure against the current set (1 query)
        std::vector<std::vector<int8_t>> c1(1, sign);
        set_block(c1[0], blocks[i], static_cast<int8_t>(-from));
        const std::vector<double> yy = evaluate(c1);
        if (yy.empty()) break;
        const double g = yy[0] - f;
        if (!heap.empty() && g < std::get<0>(heap.top())) {
          heap.emplace(g, i, version);
          continue;
        }
        gain = g;
        if (gain <= 0) continue;
      }
      set_block(sign, blocks[i], static_cast<int8_t>(-from));
      f += gain;
      ++version;
      improved = true;
    }
    return improved;
  };

  for (int k = o.initial_block; oracle.remaining() > 0 && !oracle.succeeded(); k = std::max(1, k / 2)) {
    const std::vector<Block> blocks = MakeBlocks(c, h, w, k);
    for (int pass = 0; pass < o.max_passes && oracle.remaining() > 0 && !oracle.succeeded(); ++pass) {
      const bool ins = lazy_pass(blocks, -1);
      const bool del = oracle.remaining() > 0 && !oracle.succeeded() && lazy_pass(blocks, +1);
      if (!ins && !del) break;
    }
    if (k == 1 && oracle.remaining() > 0 && !oracle.succeeded()) {
      // Finest level exhausted without improvement: restart the passes (the objective may
      // still improve after the other moves); stop if nothing changes at all.
      const double before = f;
      lazy_pass(blocks, -1);
      if (f <= before) break;
    }
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
