#include "attacks/signhunter/signhunter.h"

#include <algorithm>
#include <vector>

namespace advbo::attacks {

std::pair<size_t, size_t> SignHunterChunk(size_t n, int h, long i) {
  const size_t len = (n + (size_t{1} << h) - 1) >> h;  // ceil(n / 2^h)
  const size_t begin = std::min(n, static_cast<size_t>(i) * len);
  return {begin, std::min(n, begin + len)};
}

AttackResult SignHunterAttack::Run(oracle::QueryOracle& oracle, bo::Rng& /*rng*/,
                                   const AttackProgress& progress) const {
  const double t0 = NowSeconds();
  const std::vector<float>& x0 = oracle.clean();
  const size_t n = x0.size();
  const float eps = static_cast<float>(oracle.query_radius());
  std::vector<float> sign(n, 1.0f), x(n);
  auto vertex = [&] {
    for (size_t k = 0; k < n; ++k) x[k] = x0[k] + eps * sign[k];
  };
  vertex();
  double best = oracle.Query(x.data(), 1).objective(0);
  int h = 0;
  long i = 0;
  while (oracle.remaining() > 0 && !oracle.succeeded()) {
    const auto [begin, end] = SignHunterChunk(n, h, i);
    for (size_t k = begin; k < end; ++k) sign[k] = -sign[k];
    vertex();
    const double y = oracle.Query(x.data(), 1).objective(0);
    if (y > best) {
      best = y;
    } else {
      for (size_t k = begin; k < end; ++k) sign[k] = -sign[k];  // revert the flip
    }
    if (++i == (1L << h)) {  // next level; back to level 0 once chunks would be empty
      i = 0;
      h = (size_t{1} << (h + 1)) > n ? 0 : h + 1;
    }
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
