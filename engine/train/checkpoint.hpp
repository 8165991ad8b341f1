#pragma once
// A worker's checkpoint: everything its training loop needs to continue a run exactly where it
// stood before a given step (weights and buffers, optimizer momentum, compressor residuals and
// RNGs, schedule and stopping counters, LibTorch's generator, the position in the epoch). One
// file per rank and step; written to a temporary name, synced and renamed, so a file under its
// final name is always complete.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/run_config.hpp"
#include "engine/core/state_io.hpp"
#include "engine/train/checkpoint_files.hpp"
#include "engine/train/models/model.hpp"

namespace laconic::train {

/// What the controller asks of a worker's checkpoints.
struct Checkpointing {
  std::string dir;                ///< where the files go; "" = no checkpoints
  std::int64_t every = 0;         ///< a checkpoint before every step that is a multiple of it; 0 = none
  std::int64_t resume_step = -1;  ///< continue from the checkpoint taken before this step; -1 = fresh
  /// Called once a checkpoint is durable on disk (the worker tells the controller).
  std::function<void(std::int64_t step)> on_saved;

  bool saves() const { return !dir.empty() && every > 0; }
};

/// Where training stands when a checkpoint is taken: before global step `step`.
struct TrainingPosition {
  std::int64_t step = 0;      ///< the next global step to run
  std::int64_t epoch = 0;     ///< its epoch
  std::int64_t index = 0;     ///< its index within the epoch
  double epoch_loss_sum = 0;  ///< training losses of the epoch's earlier steps, summed
  double first_loss = std::numeric_limits<double>::quiet_NaN();  ///< the run's first step's loss
  double wall = 0;                                               ///< seconds since the run started, over every attempt
  double epoch_elapsed = 0;                                      ///< seconds the epoch had run
  /// The file's format, read back (format 3 keeps the trainer's once-per-run records; 2 did not).
  std::uint64_t format = 0;
};

/// Identifies the run configuration a checkpoint belongs to: FNV-1a of its JSON, in hex.
std::string config_fingerprint(const RunConfig& config);

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename, fsync of the directory).
/// Error naming the path on failure.
void write_file_atomically(const std::string& path, const std::vector<std::uint8_t>& bytes);

/// The whole file; Error naming the path if it cannot be read.
std::vector<std::uint8_t> read_whole_file(const std::string& path);

/// Header of every checkpoint: format, the run's configuration fingerprint, the rank, the position.
void write_checkpoint_header(StateWriter& out, const std::string& fingerprint, int rank,
                             const TrainingPosition& position);
/// Reads the header back; ConfigError when the file is of another run configuration or rank
/// (naming both), or not a laconic checkpoint.
TrainingPosition read_checkpoint_header(StateReader& in, const std::string& fingerprint, int rank,
                                        const std::string& path);

/// A whole checkpoint file: the header, then what `body` writes; written atomically.
void write_checkpoint(const std::string& path, const std::string& fingerprint, int rank,
                      const TrainingPosition& position, const std::function<void(StateWriter&)>& body);
/// Reads the file at `path`: checks its header (read_checkpoint_header), has `body` read the
/// rest, and checks nothing is left over; a section that does not fit (InvariantError) becomes a
/// ConfigError naming the file. Returns the header's position.
TrainingPosition read_checkpoint(const std::string& path, const std::string& fingerprint, int rank,
                                 const std::function<void(StateReader&, const TrainingPosition&)>& body);

/// The model's parameters and buffers (batch-norm statistics), by name, with dtype and shape.
void save_model(StateWriter& out, Model& model);
/// Loads what save_model() wrote into a model of the same architecture; ConfigError on any
/// mismatch of names, dtypes or shapes.
void load_model(StateReader& in, Model& model);

/// LibTorch's default CPU generator (dropout, random initialisation), saved and restored.
void save_torch_generator(StateWriter& out);
void load_torch_generator(StateReader& in);

}  // namespace laconic::train
