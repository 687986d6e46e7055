// Result files of attack experiments: atomic whole-file writes and resumable JSONL record
// files (one JSON object per line), so an interrupted run leaves nothing half-written under
// a final name and a re-run continues where it stopped.
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

namespace advbo::experiment {

/// Writes `text` to `path` through `path`.partial and a rename, so `path` is either the old
/// file or the complete new one. Throws std::runtime_error naming the file.
void WriteFileAtomic(const std::filesystem::path& path, const std::string& text);

/// Checks the fields every attack record carries and the tables read: attack (non-empty
/// string), image_index (integer >= 0), target (integer >= 0 or null), success (bool),
/// budget (integer in [1, 1e8]), queries (number in [0, budget]), seconds and model_seconds
/// (finite numbers >= 0), wait_seconds (if present: finite >= 0), queries_used (if present: integer
/// in [0, budget]) and quantized_success (if present: bool or null). Throws std::runtime_error
/// "WHERE: field 'F' is missing" / "... is not ..." -- never a raw JSON-library message.
void CheckRecordFields(const nlohmann::json& record, const std::string& where);

/// Checks one line of a JSONL file once parsed; throws std::runtime_error (or
/// std::invalid_argument for a line made with other settings) naming `where` ("FILE: line N").
using LineCheck = std::function<void(const nlohmann::json& line, const std::string& where)>;

/// The JSON objects of a JSONL file, one per line, each passed through `check`. An
/// unparsable last line (a write cut short by an interruption) is dropped; an unparsable
/// earlier line or a line that is not a JSON object throws std::runtime_error naming the
/// file and line; so does a file that cannot be read.
std::vector<nlohmann::json> ReadJsonLines(const std::filesystem::path& path,
                                          const LineCheck& check);

/// The records of a JSONL file: ReadJsonLines with CheckRecordFields as the check.
std::vector<nlohmann::json> ReadRecords(const std::filesystem::path& path);

/// The file-name tag of shard k of n: "" for n = 1, else ".shard-K-of-N" (records.jsonl of
/// shard 1/2 is records.shard-1-of-2.jsonl; an unsharded run combines "records.shard-*").
std::string ShardTag(int k, int n);

/// The files of a result folder that one run wrote, sharded or not: DIR/STEM EXT and
/// DIR/STEM.shard-* EXT (e.g. records.jsonl, records.shard-1-of-2.jsonl), sorted by name.
/// `ext` includes its dot. Throws std::filesystem::filesystem_error when `dir` cannot be
/// listed.
std::vector<std::filesystem::path> ShardFiles(const std::filesystem::path& dir,
                                              const std::string& stem, const std::string& ext);

/// Identity of an instance record: (attack spec, image index, target; -1 = untargeted).
using RecordKey = std::tuple<std::string, int, int>;

/// The key of a record; throws std::runtime_error when a field is missing or mistyped.
RecordKey KeyOf(const nlohmann::json& record);

/// A JSONL record file that an interrupted run resumes. Staged files (`advbo attack -o F`)
/// are written as F.partial and renamed to F by Commit(), so F exists only complete;
/// unstaged ones (`bench` shards) are appended in place. Opening reads back the records of
/// an earlier interrupted run (F.partial when staged, F otherwise; a cut-short last line is
/// dropped and the file rewritten without it) so the caller can skip finished instances.
class RecordFile {
 public:
  /// Holds an advisory lock (flock) on the file being written for its lifetime. Throws
  /// std::runtime_error naming the file when it cannot be read or written, when `path`
  /// names a folder, or when another run holds the lock (two runs on one output).
  RecordFile(std::filesystem::path path, bool staged);
  /// A file that was never committed and holds no record (the run failed before its first
  /// instance finished, e.g. an unreachable served model) is removed: a failed run leaves
  /// no result file. One with records stays for the same command to resume.
  ~RecordFile();
  /// Records already in the file when it was opened (from an interrupted run).
  const std::vector<nlohmann::json>& resumed() const { return resumed_; }
  /// Appends one record as a line and flushes it to disk.
  void Append(const nlohmann::json& record);
  /// Staged: closes the file and renames F.partial to F. Unstaged: closes the file.
  void Commit();
  /// The file being written (F.partial when staged).
  const std::filesystem::path& writing() const { return writing_; }

 private:
  std::filesystem::path path_, writing_;
  bool staged_;
  std::vector<nlohmann::json> resumed_;
  std::ofstream out_;
  bool committed_ = false, wrote_ = false;
  int lock_fd_ = -1;
};

/// The output folders of one run. Create() makes a folder and its missing parents and
/// remembers which ones it made; unless Keep() was called (the run finished), the destructor
/// removes those that are still empty, deepest first -- a run that fails (bad model, bad
/// data, a full disk) leaves no new empty folders behind. Folders that hold files (records
/// of an interrupted run, for resuming) always stay.
class CreatedFolders {
 public:
  CreatedFolders() = default;
  CreatedFolders(const CreatedFolders&) = delete;
  CreatedFolders& operator=(const CreatedFolders&) = delete;
  ~CreatedFolders();
  /// Creates `dir` (and missing parents). Throws std::runtime_error naming the folder when
  /// it cannot be created or names a file.
  void Create(const std::filesystem::path& dir);
  /// The run finished: keep every folder.
  void Keep() { made_.clear(); }

 private:
  std::vector<std::filesystem::path> made_;  ///< outermost first
};

/// Removes the file `path` on destruction unless Release() was called: the half-written
/// output of a run that failed (an exception unwinding past it) is never left behind.
class RemoveUnlessReleased {
 public:
  /// Removes `path` when destroyed unless Release() was called.
  explicit RemoveUnlessReleased(std::filesystem::path path) : path_(std::move(path)) {}
  RemoveUnlessReleased(const RemoveUnlessReleased&) = delete;
  RemoveUnlessReleased& operator=(const RemoveUnlessReleased&) = delete;
  ~RemoveUnlessReleased() {
    std::error_code ec;
    if (!released_) std::filesystem::remove(path_, ec);
  }
  /// Keeps the file (the run finished).
  void Release() { released_ = true; }

 private:
  std::filesystem::path path_;
  bool released_ = false;
};

}  // namespace advbo::experiment
