// A Blacklight-style stateful detector of query attacks (Li et al., "Blacklight: Scalable
// Defense for Neural Networks against Query-Based Black-Box Attacks", USENIX Security 2022,
// Sec. 4): query attacks send long runs of near-identical images, so the defender keeps a
// fingerprint of every query of a client and flags a query that shares many fingerprint
// entries with an earlier one.
//
// Fingerprint of one image (Sec. 4.1): pixels quantised to steps of `quantization` on the
// 0..255 scale, the quantised image flattened (C, H, W order), every window of `window`
// consecutive values hashed (stride 1), and the `hashes` largest distinct hash values kept.
// A query is detected when some earlier query of the same client shares at least
// `threshold` of its fingerprint's hashes (Sec. 4.2). Defaults are the paper's CIFAR-10
// setting: quantization 50, window 20, 50 hashes, threshold 25.
//
// As a --defense spec: blacklight:quantization=50,window=20,hashes=50,threshold=25,action=
// reject|flag. reject: a detected query is refused — it still counts as a query, and the
// attacker gets a flat answer (every class equally likely) that can never be a success;
// flag: the query is answered as usual and only counted as a detection. Either way records
// carry detections and first_detection. One detector per client: per attack instance
// locally, per session on `advbo serve`.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace advbo::defenses {

/// The detector's settings (validated by StatefulDetector's constructor).
struct BlacklightOptions {
  int quantization = 50;  ///< pixel step on the 0..255 scale, in [1, 255]
  int window = 20;        ///< sliding-window length over the flattened image, >= 1
  int hashes = 50;        ///< fingerprint size (largest window hashes kept), >= 1
  int threshold = 25;     ///< shared hashes with one earlier query that flag, in [1, hashes]
  bool reject = true;     ///< refuse detected queries (true) or answer and flag them (false)
  /// Every field in its documented range; throws std::invalid_argument "blacklight: ...".
  void Validate() const;
  /// That the detector can fire on images of `values` pixel values (C*H*W): a fingerprint
  /// holds at most values - window + 1 distinct window hashes, so the window must fit and
  /// threshold must not exceed that count. Throws std::invalid_argument naming the setting,
  /// the image size and the reason (a detector that can never fire would report
  /// 0 detections and look like a defense).
  void ValidateFor(int values) const;
};

/// Parses "key=value,..." settings of the blacklight spec (quantization, window, hashes,
/// threshold, action=reject|flag) over the defaults. Throws std::invalid_argument naming
/// `part` and the setting on an unknown key or an out-of-range value.
BlacklightOptions ParseBlacklightSettings(const std::string& part, const std::string& settings);

/// The canonical spec of `o` ("blacklight:quantization=50,...,action=reject").
std::string BlacklightSpec(const BlacklightOptions& o);

/// One client's detector: remembers the fingerprints of every query it observed.
class StatefulDetector {
 public:
  /// Throws std::invalid_argument when a setting is out of range.
  explicit StatefulDetector(BlacklightOptions options);
  /// The fingerprint of one image of `size` pixels in [0, 1]: at most options.hashes
  /// distinct window hashes, largest first (fewer when the image has fewer windows).
  std::vector<uint64_t> Fingerprint(const float* image, int size) const;
  /// Checks one query against every earlier one, then remembers it; true when detected.
  bool Observe(const float* image, int size);
  /// Queries observed, detections among them, and the 1-based index of the first detected
  /// query (-1: none).
  long observed() const { return observed_; }
  /// Queries the detector has flagged so far.
  long detections() const { return detections_; }
  /// 1-based index of the first flagged query (0: none yet).
  long first_detection() const { return first_detection_; }
  /// The detector's settings.
  const BlacklightOptions& options() const { return opt_; }

 private:
  BlacklightOptions opt_;
  std::unordered_map<uint64_t, std::vector<int>> seen_;  ///< hash -> queries holding it
  std::vector<std::vector<uint64_t>> fingerprints_;      ///< per observed query
  std::vector<int> checked_;  ///< per query: the last Observe that checked it as a candidate
  long observed_ = 0, detections_ = 0, first_detection_ = -1;
};

}  // namespace advbo::defenses
