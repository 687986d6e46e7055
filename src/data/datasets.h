// Dataset readers: MNIST IDX (LeCun et al. 1998; .gz or raw), CIFAR-10 binary batches
// (Krizhevsky 2009) and image files/folders (PNG/JPEG via OpenCV). All return float32
// NCHW pixels in [0, 1] (uint8 / 255) plus integer labels. No LibTorch dependency.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace advbo::data {

/// A missing, truncated or corrupt dataset file; the message names the file and problem.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A batch of images, row-major [N, C, H, W], pixels in [0, 1].
struct ImageSet {
  /// Image shape: channels, height, width in pixels.
  ///@{
  int channels = 0, height = 0, width = 0;
  ///@}
  std::vector<float> pixels;             ///< N * C * H * W values in [0, 1]
  std::vector<int> labels;               ///< N labels (-1 where unknown)
  std::vector<std::string> class_names;  ///< optional, index = label
  std::vector<std::string> sources;      ///< optional per-image origin (file names)

  /// Number of images.
  size_t size() const { return labels.size(); }
  /// Pixels per image, channels * height * width.
  size_t image_size() const { return static_cast<size_t>(channels) * height * width; }
  /// Pointer to image i's C*H*W pixels. Throws std::out_of_range if i >= size().
  const float* image(size_t i) const;
};

/// Reads MNIST IDX images (magic 0x00000803, [N, 28, 28] uint8) and, unless labels_path
/// is empty, labels (magic 0x00000801, [N]); gzip-compressed or raw. `limit` > 0 keeps the
/// first `limit` images. Throws DataError naming the file on a missing file, wrong magic,
/// count mismatch between images and labels, labels outside 0..9, or truncated data.
ImageSet ReadMnist(const std::string& images_path, const std::string& labels_path,
                   size_t limit = 0);

/// Reads CIFAR-10 binary batch files (records of 1 label byte + 3072 pixel bytes, planes
/// R, G, B row-major 32x32), concatenated in order. Throws DataError naming the file on a
/// missing/empty file, a size that is not a multiple of 3073, or a label outside 0..9.
ImageSet ReadCifar10(const std::vector<std::string>& paths, size_t limit = 0);

/// Reads one image file or every PNG/JPEG/BMP in a folder (contents checked by signature;
/// sorted by path, recursing one level). Labels: root/<class index>/img.png when every
/// sub-folder is named by an integer; otherwise the ImageFolder convention (torchvision):
/// all sub-folder names sorted are the classes 0..K-1 (empty ones keep their index) and
/// fill class_names.
/// Images in root itself and a single file have label -1.
/// channels: 1 (grey), 3 (RGB) or 0 (keep the first image's). All images must share one
/// size. Throws DataError naming the file that is missing, unreadable or differently sized.
ImageSet ReadImages(const std::string& path, int channels = 0, size_t limit = 0);

/// Gives the classes of `set` the order `classes` (index = position), for a model whose
/// classes are not ordered like the data's (an image folder's sub-folders are taken in sorted
/// order, as torchvision's ImageFolder does: `five` = 0, `four` = 1, ...): every label is
/// re-mapped by its class name and `class_names` becomes `classes`. `name` (the data's path)
/// is used in error messages. Throws DataError when the set names no classes (e.g. folders
/// named by integers, which give the labels themselves), a class name of the set is missing
/// from `classes`, or `classes` has an empty or repeated name.
void ApplyClassOrder(ImageSet* set, const std::vector<std::string>& classes,
                     const std::string& name);

/// "five=0, four=1, ..." (at most `max_shown` pairs, then ", ..."); empty when `set` names no
/// classes. For banners and error messages.
std::string ClassMapping(const ImageSet& set, size_t max_shown = 12);

/// In-memory forms of the readers above (the files' bytes, e.g. from a network request or a
/// fuzzer). `name` is used in error messages in place of a path. ParseMnist takes the images
/// and (unless `labels` is null) labels bytes, each gzip-compressed or raw; ParseCifar10 one
/// batch's bytes; DecodeImage one PNG/JPEG/BMP file's bytes (label -1, source = name; other
/// formats are refused by their signature, as ReadImages refuses them; images larger than
/// kMaxImagePixels by their header are refused before decoding). Same
/// shapes, ranges and errors (DataError) as the file readers, which call them.
ImageSet ParseMnist(const std::vector<uint8_t>& images, const std::string& images_name,
                    const std::vector<uint8_t>* labels, const std::string& labels_name,
                    size_t limit = 0);
ImageSet ParseCifar10(const std::vector<uint8_t>& batch, const std::string& name, size_t limit = 0);
ImageSet DecodeImage(const std::vector<uint8_t>& bytes, const std::string& name, int channels = 0);

/// Largest data file read (MNIST IDX, CIFAR-10 batch, image): 1 GiB. Only regular files
/// are read (not /dev/zero, FIFOs or folders).
inline constexpr unsigned long long kMaxDataFileBytes = 1ULL << 30;

/// Largest image DecodeImage / ReadImages decode: 16,777,216 pixels (4096 x 4096), checked
/// from the file's header before any pixel is decoded, so a small file that claims to be
/// 20000 x 20000 (a decompression bomb) costs nothing.
inline constexpr long long kMaxImagePixels = 4096LL * 4096LL;

/// Width and height from a PNG (IHDR), BMP (BITMAPINFOHEADER) or JPEG (SOFn) header, or
/// {-1, -1} when the header cannot be read (the decoder then reports the file).
std::pair<long long, long long> ImageHeaderSize(const std::vector<uint8_t>& bytes);

/// Gunzips `bytes` if they start with the gzip magic (1f 8b; concatenated members are
/// joined, trailing non-gzip bytes ignored as gzip(1) does), else returns them unchanged.
/// Throws DataError naming `name` on a corrupt or truncated stream.
std::vector<uint8_t> GunzipIfCompressed(const std::vector<uint8_t>& bytes, const std::string& name);

/// Reads class names, one per line (CIFAR-10 batches.meta.txt); empty vector if missing.
std::vector<std::string> ReadClassNames(const std::string& path);

/// Writes image i of a [C, H, W] float buffer in [0,1] as 8-bit PNG (grey or RGB). Throws
/// DataError if the file cannot be written.
void WritePng(const std::string& path, const float* chw, int channels, int height, int width);

}  // namespace advbo::data
