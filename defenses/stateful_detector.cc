#include "defenses/stateful_detector.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "text/numbers.h"
#include "text/settings.h"
namespace advbo::defenses {
namespace {

// The window hashes of a quantised image: a polynomial hash of each window of n values
// (base B, mod 2^64), rolled along the image in O(1) per window, finished with the splitmix64
// mixer so that "the largest hashes" is a uniform choice of windows (Blacklight uses SHA-256
// for the same purpose; any well-mixed hash serves, the fingerprint only needs equal windows
// to hash equally and different ones to differ).
std::vector<uint64_t> WindowHashes(const std::vector<uint8_t>& v, int n) {
  constexpr uint64_t kBase = 0x100000001b3ull;
  std::vector<uint64_t> out;
  if (static_cast<int>(v.size()) < n) return out;
  uint64_t top = 1;  // B^(n - 1)
  for (int i = 1; i < n; ++i) top *= kBase;
  uint64_t h = 0;
  for (int i = 0; i < n; ++i) h = h * kBase + (v[i] + 1u);
  out.reserve(v.size() - n + 1);
  for (size_t s = 0;; ++s) {
    uint64_t m = h;
    m ^= m >> 30;
    m *= 0xbf58476d1ce4e5b9ull;
    m ^= m >> 27;
    m *= 0x94d049bb133111ebull;
    m ^= m >> 31;
    out.push_back(m);
    if (s + n >= v.size()) break;
    h = (h - (v[s] + 1u) * top) * kBase + (v[s + n] + 1u);
  }
  return out;
}

}  // namespace

BlacklightOptions ParseBlacklightSettings(const std::string& part, const std::string& settings) {
  BlacklightOptions o;
  for (const auto& setting : text::SplitSettings(settings, "defense '" + part + "'")) {
    const std::string& key = setting.first;  // named, not bound: the lambda below captures it
    const std::string& value = setting.second;
    if (key == "action") {
      if (value != "reject" && value != "flag")
        throw std::invalid_argument("defense '" + part + "': action must be reject or flag");
      o.reject = value == "reject";
      continue;
    }
    long v = 0;
    try {
      v = text::ParseInteger(value, key);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("defense '" + part + "': " + key + " must be an integer");
    }
    auto in = [&](long lo, long hi) {
      if (v < lo || v > hi)
        throw std::invalid_argument("defense '" + part + "': " + key + " must be in [" +
                                    std::to_string(lo) + ", " + std::to_string(hi) + "]");
      return static_cast<int>(v);
    };
    if (key == "quantization")
      o.quantization = in(1, 255);
    else if (key == "window")
      o.window = in(1, 100000);
    else if (key == "hashes")
      o.hashes = in(1, 10000);
    else if (key == "threshold")
      o.threshold = in(1, 10000);
    else
      throw std::invalid_argument("defense '" + part + "': unknown parameter '" + key +
                                  "' (expected quantization, window, hashes, threshold, action)");
  }
  if (o.threshold > o.hashes)
    throw std::invalid_argument("defense '" + part + "': threshold must be <= hashes");
  return o;
}

std::string BlacklightSpec(const BlacklightOptions& o) {
  return "blacklight:quantization=" + std::to_string(o.quantization) +
         ",window=" + std::to_string(o.window) + ",hashes=" + std::to_string(o.hashes) +
         ",threshold=" + std::to_string(o.threshold) + ",action=" + (o.reject ? "reject" : "flag");
}

void BlacklightOptions::Validate() const {
  if (quantization < 1 || quantization > 255 || window < 1 || hashes < 1 || threshold < 1 ||
      threshold > hashes)
    throw std::invalid_argument("blacklight: settings out of range");
}

void BlacklightOptions::ValidateFor(int values) const {
  Validate();
  const std::string spec = BlacklightSpec(*this);
  if (window > values)
    throw std::invalid_argument("defense '" + spec + "': window " + std::to_string(window) +
                                " is longer than the image's " + std::to_string(values) +
                                " pixel values, so no query has a window hash and the detector "
                                "can never fire; use window <= " +
                                std::to_string(values));
  const int windows = values - window + 1;
  if (threshold > windows)
    throw std::invalid_argument("defense '" + spec + "': threshold " + std::to_string(threshold) +
                                " exceeds the " + std::to_string(windows) +
                                " window hashes a fingerprint of a " + std::to_string(values) +
                                "-value image can hold (values - window + 1), so the detector "
                                "can never fire; use threshold <= " +
                                std::to_string(windows));
}

StatefulDetector::StatefulDetector(BlacklightOptions o) : opt_(o) { o.Validate(); }

std::vector<uint64_t> StatefulDetector::Fingerprint(const float* image, int size) const {
  std::vector<uint8_t> q(size);
  for (int i = 0; i < size; ++i) {
    const double v = std::clamp(static_cast<double>(image[i]), 0.0, 1.0) * 255.0;
    q[i] = static_cast<uint8_t>(std::floor(std::round(v) / opt_.quantization));
  }
  std::vector<uint64_t> h = WindowHashes(q, opt_.window);
  // The `hashes` largest distinct values: select a few times that many first (cheap), and
  // sort everything only when repeated windows leave too few distinct ones among them.
  const size_t pick = 4 * static_cast<size_t>(opt_.hashes);
  std::vector<uint64_t> top = h;
  if (top.size() > pick) {
    std::nth_element(top.begin(), top.begin() + pick, top.end(), std::greater<uint64_t>());
    top.resize(pick);
  }
  std::sort(top.begin(), top.end(), std::greater<uint64_t>());
  top.erase(std::unique(top.begin(), top.end()), top.end());
  if (static_cast<int>(top.size()) < opt_.hashes && h.size() > pick) {
    top = std::move(h);
    std::sort(top.begin(), top.end(), std::greater<uint64_t>());
    top.erase(std::unique(top.begin(), top.end()), top.end());
  }
  h = std::move(top);
  if (static_cast<int>(h.size()) > opt_.hashes) h.resize(opt_.hashes);
  return h;
}

namespace {

// Hashes two fingerprints (each sorted largest first, distinct) have in common.
int SharedHashes(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  int n = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) {
      ++n;
      ++i;
      ++j;
    } else if (a[i] > b[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return n;
}

}  // namespace

bool StatefulDetector::Observe(const float* image, int size) {
  std::vector<uint64_t> fp = Fingerprint(image, size);
  const int id = static_cast<int>(observed_++);
  // An earlier query sharing >= threshold of the k hashes misses at most k - threshold of
  // them, so it holds one of the first k - threshold + 1: only those hashes' queries are
  // candidates, each checked once (most recent first: a query attack's near-duplicates sit
  // at the end) until one shares enough. The verdict is Sec. 4.2's, found without counting
  // over every earlier query of every hash.
  bool detected = false;
  const int k = static_cast<int>(fp.size()), generators = k - opt_.threshold + 1;
  checked_.push_back(-1);
  for (int g = 0; g < generators && !detected; ++g) {
    const auto it = seen_.find(fp[g]);
    if (it == seen_.end()) continue;
    for (auto other = it->second.rbegin(); other != it->second.rend(); ++other) {
      if (checked_[*other] == id) continue;
      checked_[*other] = id;
      if (SharedHashes(fingerprints_[*other], fp) >= opt_.threshold) {
        detected = true;
        break;
      }
    }
  }
  for (uint64_t h : fp) seen_[h].push_back(id);
  fingerprints_.push_back(std::move(fp));
  if (detected) {
    ++detections_;
    if (first_detection_ < 0) first_detection_ = observed_;
  }
  return detected;
}

}  // namespace advbo::defenses
