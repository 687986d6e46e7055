#include "fuzz_targets.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "attacks/attack.h"
#include "cli/parse.h"
#include "data/datasets.h"
#include "defenses/defense.h"
#include "defenses/game_defense.h"
#include "experiment/spec.h"

namespace advbo::fuzz {
namespace {

// Runs f; the documented refusals are fine, anything else propagates (a finding).
template <class F>
int Refusable(F&& f) {
  try {
    f();
  } catch (const data::DataError&) {
  } catch (const std::invalid_argument&) {
  } catch (const std::runtime_error&) {
  }
  return 0;
}

}  // namespace

int FuzzMnist(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t rest = size - 2;
  const size_t split = std::min(rest, static_cast<size_t>(data[0]) << 8 | data[1]);
  const std::vector<uint8_t> images(data + 2, data + 2 + split);
  const std::vector<uint8_t> labels(data + 2 + split, data + size);
  return Refusable([&] {
    const data::ImageSet s = data::ParseMnist(images, "images", &labels, "labels");
    if (s.pixels.size() != s.size() * s.image_size()) std::abort();
  });
}

int FuzzCifar10(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> batch(data, data + size);
  return Refusable([&] {
    const data::ImageSet s = data::ParseCifar10(batch, "batch");
    if (s.pixels.size() != s.size() * s.image_size()) std::abort();
  });
}

int FuzzImages(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  return Refusable([&] {
    const data::ImageSet s = data::DecodeImage(bytes, "x.png");
    if (s.pixels.size() != s.size() * s.image_size() || s.size() != 1) std::abort();
  });
}

int FuzzSpecs(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  Refusable([&] { defenses::ParseDefense(s); });
  Refusable([&] {
    if (defenses::IsGameDefense(s)) defenses::ParseGameDefense(s);
  });
  Refusable([&] { attacks::MakeAttack(s, attacks::AttackContext{}); });
  Refusable([&] { experiment::SplitAttackList(s); });
  return 0;
}

int FuzzBounds(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int dim = static_cast<int>(data[0]) - 8;  // -8..247: unset, invalid and valid dims
  const std::string s(reinterpret_cast<const char*>(data + 1), size - 1);
  Refusable([&] {
    Eigen::VectorXd lb, ub;
    cli::ParseBounds(s, dim, &lb, &ub);
    if (lb.size() != ub.size() || lb.size() == 0) std::abort();
    for (Eigen::Index i = 0; i < lb.size(); ++i)
      if (!(lb(i) < ub(i))) std::abort();
  });
  Refusable([&] {
    const Eigen::MatrixXd c = cli::ParseCandidates(s, "c.csv");
    if (c.rows() < 1 || c.cols() < 1 || !c.allFinite()) std::abort();
  });
  Refusable([&] {
    bo::DesignKind kind;
    int n = 0;
    cli::ParseInit(s, &kind, &n);
    if (n < 0) std::abort();
  });
  return 0;
}

std::vector<std::pair<std::string, Harness>> Harnesses() {
  return {{"mnist", FuzzMnist},
          {"cifar10", FuzzCifar10},
          {"images", FuzzImages},
          {"specs", FuzzSpecs},
          {"bounds", FuzzBounds}};
}

}  // namespace advbo::fuzz
