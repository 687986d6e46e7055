// Attack instances in lockstep: B jobs run on B threads ("lanes") and every
// model call of a lane waits for one call of every other running lane; the calls of one such
// round go to the model as one batch. A frozen model scores a batch of 8 CIFAR-10 images in
// about 0.8 ms per image against 1.2 ms for one image alone (docs/results/performance.md), and
// the lanes' own work (BO, sampling) runs on both cores meanwhile.
//
// Determinism. A round's batch is the waiting lanes' images in lane order, and jobs are handed
// out at round boundaries in lane order, so a run's batches are a function of the jobs alone,
// never of thread timing. Every forward has exactly `lanes` rows (a round's images are cut into
// chunks of that size; the last is padded with zero images, which are scored and discarded):
// the shipped models' frozen and plain graphs score an image bit for bit the same at any row of
// a batch of 2, 3, 4, 8 or 12 rows on this machine (not in the last rows of 5-7, 9-11 or
// 13-16: the kernels seem to take rows in blocks of 4 and a remainder differently;
// tests/oracle/lockstep_test.cc checks 2, 4 and 8, the sizes --lockstep 0 picks), but not
// across sizes. So with such a B an image's scores depend only on the image and B: a resumed
// run, a shard or a run with other jobs scores it the same. With any B the batches, and so the
// records, depend only on the jobs, never on thread timing. B goes into the records
// (`lockstep`). B = 1 is no batching at all: every call goes to the model as
// it is, bit for bit what advbo scored before lockstep existed.
//
// Worker groups. With W > 1 groups the jobs are dealt out as shards are
// (group g takes jobs g, g + W, g + 2W, ...), and each group runs its own B lanes and its own
// rounds, so W forward passes can run at once, each on its own core (one LibTorch thread
// each), while the other groups' lanes do their own work. A group's batches are a function of
// its jobs alone, so the records still never depend on thread timing; commits stay in global
// job order.
#pragma once

#include <Eigen/Dense>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "oracle/classifier.h"

namespace advbo::oracle {

/// Largest accepted number of lanes (--lockstep).
inline constexpr int kMaxLockstepLanes = 64;
/// Largest accepted number of worker groups (--workers).
inline constexpr int kMaxLockstepGroups = 64;

/// What the rounds of a Lockstep have done so far (all runs together).
struct LockstepStats {
  long rounds = 0;               ///< rounds that scored images
  long forwards = 0;             ///< model forward passes (each of `lanes` rows)
  long rows = 0;                 ///< images the lanes asked for
  long padded_rows = 0;          ///< zero images added to fill the last chunk of a round
  double forward_seconds = 0.0;  ///< wall seconds inside the model's forward passes
};

/// The lanes and their rounds. Thread-safe; Run is not reentrant.
class Lockstep {
 public:
  /// `lanes` in [1, kMaxLockstepLanes], `groups` in [1, kMaxLockstepGroups]; throws
  /// std::invalid_argument otherwise.
  explicit Lockstep(int lanes, int groups = 1);
  Lockstep(const Lockstep&) = delete;
  Lockstep& operator=(const Lockstep&) = delete;

  /// B: the most jobs of one group running at once and the rows of every forward pass.
  int lanes() const { return lanes_; }
  /// Sets B before a run (same range as the constructor). Throws std::logic_error during Run.
  void set_lanes(int lanes);
  /// W: worker groups, each with its own B lanes and rounds (forward passes of different
  /// groups run at the same time when the model's back end is thread-safe).
  int groups() const { return groups_; }
  /// Sets W before a run (same range as the constructor). Throws std::logic_error during Run.
  void set_groups(int groups);

  /// What a job leaves to do once every job before it is done (write its record, advance a
  /// progress bar); may be empty.
  using Commit = std::function<void()>;
  /// Runs job(k) for k = 0..n-1 in lockstep: group g (of W) takes jobs g, g+W, g+2W, ... on
  /// min(B, its job count) new threads; the returned commits run in job order (0, 1, 2, ...),
  /// one at a time. A group's next job starts only when one of its jobs has finished, at a
  /// round boundary of that group. When a job (or a commit) throws, no further job
  /// starts, the running ones finish and commit, and the exception of the lowest-numbered
  /// failed job is rethrown here after every lane has stopped.
  void Run(size_t n, const std::function<Commit(size_t)>& job);

  /// Raw scores [n, classes] of `images` (n images [c, h, w], contiguous) from `inner`. From
  /// a lane of a running Run: joins its group's current round (waits for every other running
  /// lane of the group to call Score or finish its job) and is answered from the round's batched
  /// forward passes; context->timing (if any) gains the call's wall time beyond its images'
  /// share of the round's forward seconds (QueryTiming::wait_seconds). From any other thread:
  /// `inner` scores the images as they are. Throws what
  /// `inner` throws (every lane of the failed round gets the exception) and OutputError when a
  /// forward pass returns another row count.
  Eigen::MatrixXd Score(const ScoreBackend& inner, const float* images, int n, int c, int h, int w,
                        const QueryContext* context);

  /// Whether the calling thread is a lane of a running Run (its model calls join rounds).
  bool InLane() const;

  /// What the lanes have scored so far (LockstepStats: rounds, images, padding).
  LockstepStats stats() const;

 private:
  enum class LaneState { kRunning, kWantJob, kWantScore, kInFlight, kDone };
  struct Lane {
    LaneState state = LaneState::kDone;
    int group = 0;                        // its worker group
    size_t job = 0;                       // assigned job (state kRunning after kWantJob)
    const ScoreBackend* inner = nullptr;  // request (state kWantScore)
    const float* images = nullptr;
    int n = 0, c = 0, h = 0, w = 0;
    Eigen::MatrixXd scores;    // answer
    std::exception_ptr error;  // or the failure of its round's forward
    double forward_share = 0;  // its rows' share of the round's forward seconds
  };
  // One worker group's round state: its live lanes, how many of them wait, and its jobs
  // (local index j is global job group + j * W).
  struct Group {
    int live = 0, waiting = 0;
    size_t next_job = 0, n_jobs = 0;
  };
  // The lane of the calling thread, -1 outside a run's lanes. Caller holds mu_.
  int LaneOfThisThread() const;
  // Runs group g's round when every live lane of it waits. Caller holds `lock` (on mu_); it
  // may be released during the forward passes.
  void MaybeRunRound(std::unique_lock<std::mutex>& lock, int g);
  // Scores the asking lanes' requests in chunks of lanes_ rows; fills their answers. Called
  // without mu_ held; only this round's leader touches those lanes meanwhile (forward passes
  // of a back end that is not thread-safe take forward_mu_).
  void ForwardRound(const std::vector<int>& asking);
  // The asking lanes' `rows` images scored in forward passes of lanes_ rows (the last one
  // padded with zero images), or, with lanes_ 1, the one lane's call as it is; sets
  // *forwards. Throws what the back end throws and OutputError on a wrong row count.
  Eigen::MatrixXd ScoreInChunks(const std::vector<int>& asking, long rows, long* forwards) const;
  // The lane's loop: take a job, run it, hand its commit over; until no job is left.
  void LaneMain(int lane, const std::function<Commit(size_t)>& job);
  // Stores job k's commit (or failure) and runs every commit now in order.
  void Deliver(size_t k, Commit commit, std::exception_ptr error);

  int lanes_, groups_;
  std::mutex forward_mu_;
  mutable std::mutex mu_;
  std::vector<std::condition_variable> wake_;  // one per lane: a round wakes only its lanes
  bool running_ = false;
  std::vector<Lane> lane_;
  std::map<std::thread::id, int> lane_of_;
  std::vector<Group> group_;
  bool abort_ = false;
  LockstepStats stats_;

  std::mutex commit_mu_;  // order of commits (taken before mu_, never after)
  std::map<size_t, Commit> pending_;
  size_t next_commit_ = 0;
  size_t error_job_ = 0;
  std::exception_ptr error_;
};

/// A back end that scores through `inner` in `lockstep`'s rounds (Lockstep::Score). Its name,
/// graph and thread safety are `inner`'s.
std::unique_ptr<ScoreBackend> MakeLockstepBackend(std::unique_ptr<ScoreBackend> inner,
                                                  std::shared_ptr<Lockstep> lockstep);

}  // namespace advbo::oracle
