#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "engine/catalog.hpp"
#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/worker.hpp"
#include "temp_dir.hpp"
#include "train_ranks.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>
#include "skip.hpp"

using namespace laconic;
using laconic::testing::TempDir;
using laconic::testing::train_ranks;

namespace {

// Stateful everywhere a checkpoint must reach: momentum, Top-k's error-feedback residual,
// local SGD's counter, DiLoCo's outer momentum (its rounds of 3 steps end between checkpoints) and Streaming DiLoCo's fragments' compressors and counters, the epoch boundary inside the run; "streaming_overlap": fragment 1's exchange, sent at step 2 and applied at step 4, is in flight at the checkpoint before step 4 (and fragment 0's, sent at step 11, before step 12). "demo": synchronous with the demo optimizer, whose momentum its codec keeps; "onebit_adam": 1-bit Adam, frozen at step 5, between two checkpoints (its moments and its codec's error). "overlapped": synchronous, with the
// gradient exchanged in buckets during backward, each bucket with its own layer-wise Top-k.
RunConfig stateful_run(const std::string& schedule_or_overlapped) {
  const bool overlapped = schedule_or_overlapped == "overlapped", demo = schedule_or_overlapped == "demo",
             onebit_adam = schedule_or_overlapped == "onebit_adam";
  const std::string schedule = overlapped || demo || onebit_adam ? "synchronous" : schedule_or_overlapped;
  engine::EngineCatalog catalog;
  RunConfig c;
  c.experiment = "test";
  c.name = "checkpoint";
  c.dataset = catalog.resolve({"dataset", "fashion_mnist", {}});
  c.model = catalog.resolve({"model", "lenet5", {}});
  c.optimizer = catalog.resolve({"optimizer", "sgd", {{"lr", 0.05}, {"momentum", 0.9}}});
  c.topology = catalog.resolve({"topology", "allreduce", {}});
  c.schedule = schedule == "local_sgd" ? catalog.resolve({"schedule", "local_sgd", {{"period", std::int64_t{3}}}})
               : schedule == "diloco"  ? catalog.resolve({"schedule", "diloco", {{"inner_steps", std::int64_t{3}}}})
               : schedule == "streaming"
                   ? catalog.resolve({"schedule", "diloco", {{"inner_steps", std::int64_t{3}}, {"fragments", std::int64_t{2}}}})
               : schedule == "streaming_overlap"
                   ? catalog.resolve({"schedule",
                                      "diloco",
                                      {{"inner_steps", std::int64_t{6}},
                                       {"fragments", std::int64_t{2}},
                                       {"overlap", std::int64_t{2}},
                                       {"alpha", 0.5}}})
                                       : catalog.resolve({"schedule", schedule, {}});
  c.compressor = catalog.resolve({"compressor", "topk", {{"ratio", 0.05}}});
  if (overlapped) {
    c.topology =
        catalog.resolve({"topology", "allreduce", {{"overlap", true}, {"first_bucket_mb", 0.01}, {"bucket_mb", 0.1}}});
    c.compressor = catalog.resolve({"compressor", "topk", {{"ratio", 0.05}, {"scope", std::string("layer")}}});
  }
  if (demo) {  // DeMo's momentum lives in its codec, the run's compressor
    c.optimizer = catalog.resolve({"optimizer", "demo", {{"lr", 1e-3}}});
    c.compressor = catalog.resolve({"compressor", "none", {}});
  }
  if (onebit_adam) {  // its moments in the optimizer, its error in the codec
    c.optimizer = catalog.resolve({"optimizer", "onebit_adam", {{"lr", 1e-4}, {"warmup_steps", std::int64_t{5}}}});
    c.compressor = catalog.resolve({"compressor", "none", {}});
  }
  c.batch_size = 16;
  c.max_steps = 7;
  c.epochs = 2;
  c.eval_limit = 200;
  c.workers = 2;
  return c;
}

// (step, key) -> value of one rank's per-step and per-epoch records, from `from_step` on.
std::map<std::pair<std::int64_t, std::string>, double> by_step(const std::vector<MetricRecord>& records,
                                                               std::int64_t from_step) {
  std::map<std::pair<std::int64_t, std::string>, double> out;
  for (const auto& r : records)
    if (r.step >= from_step && (r.key == "train_loss" || r.key == "payload_bytes" || r.key == "test_accuracy" ||
                                r.key == "test_loss" || r.key == "epoch_train_loss"))
      out[{r.step, r.key}] = r.value;
  return out;
}

// Every (step, key) one rank recorded from `from_step` on, whatever its value (times differ from
// run to run): a resumed run records each once, as the uninterrupted run did.
std::set<std::pair<std::int64_t, std::string>> recorded_keys(const std::vector<MetricRecord>& records,
                                                             std::int64_t from_step) {
  std::set<std::pair<std::int64_t, std::string>> out;
  for (const auto& r : records)
    if (r.step >= from_step) CHECK(out.insert({r.step, r.key}).second);  // never twice in one run either
  return out;
}

// The message of the E that `f` throws; "(nothing thrown)" if it returns. Other exceptions fail the test.
template <class E, class F>
std::string thrown(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

// The steps of the checkpoints every rank reported saving (from any thread).
class SavedSteps {
 public:
  train::Checkpointing every(const std::string& dir, std::int64_t steps) {
    return {dir, steps, -1, [this](std::int64_t step) {
              std::lock_guard<std::mutex> lock(mutex_);
              steps_.push_back(step);
            }};
  }
  std::vector<std::int64_t> sorted() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::int64_t> out = steps_;
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::mutex mutex_;
  std::vector<std::int64_t> steps_;
};

}  // namespace

TEST_CASE("a run resumed from its checkpoints continues exactly as the uninterrupted run",
          "[train][checkpoint][multirank]") {
  const std::string schedule = GENERATE(as<std::string>{}, "synchronous", "local_sgd", "diloco", "streaming", "streaming_overlap",
                                       "overlapped", "demo", "onebit_adam");
  INFO("schedule " << schedule);
  const auto config = stateful_run(schedule);
  TempDir dir;
  SavedSteps saved;
  const auto whole = train_ranks(config, saved.every(dir.path, 4));
  // 14 steps: checkpoints before steps 4, 8 (epoch 1, index 1) and 12, on each rank.
  CHECK(saved.sorted() == std::vector<std::int64_t>{4, 4, 8, 8, 12, 12});
  for (int rank : {0, 1})
    for (std::int64_t step : {4, 8, 12}) CHECK(std::filesystem::exists(train::checkpoint_path(dir.path, rank, step)));

  for (const std::int64_t resume : {std::int64_t{4}, std::int64_t{8}}) {
    INFO("resumed at step " << resume);
    const auto resumed = train_ranks(config, {dir.path, 0, resume, {}});
    for (int rank : {0, 1}) {
      INFO("rank " << rank);
      CHECK(resumed.at(rank).result.parameter_hash == whole.at(rank).result.parameter_hash);
      CHECK(resumed.at(rank).result.steps == 14);
      const auto expected = by_step(whole.at(rank).records, resume);
      const auto got = by_step(resumed.at(rank).records, 0);
      CHECK(got == expected);  // bit for bit, from the resumed step on, and nothing before it
      CHECK(got.size() > 10);
      // Every metric key, the once-per-run decoded_payloads included (recorded at step 0, before
      // the checkpoint): the same records, none again.
      CHECK(recorded_keys(resumed.at(rank).records, 0) == recorded_keys(whole.at(rank).records, resume));
    }
  }
}

TEST_CASE("a run with synchronous parameter servers resumes exactly as the uninterrupted run",
          "[train][checkpoint][multirank][ps]") {
  // pull = weights: the server steps the optimizer (momentum) on its copy of the model;
  // compress_pull: it codes its replies with Top-k and error feedback of its own; with two
  // servers the workers hold one Top-k per shard (the topology's state).
  const std::int64_t servers = GENERATE(std::int64_t{1}, std::int64_t{2});
  INFO(servers << " servers");
  auto config = stateful_run("synchronous");
  config.topology = engine::EngineCatalog().resolve(
      {"topology",
       "parameter_server",
       {{"pull", std::string("weights")}, {"compress_pull", true}, {"servers", servers}}});
  const int world = 2 + static_cast<int>(servers);
  TempDir dir;
  SavedSteps saved;
  const auto whole = train_ranks(config, saved.every(dir.path, 4));
  // Before steps (rounds) 4, 8 and 12, on every rank, servers included.
  const auto steps = saved.sorted();
  CHECK(std::count(steps.begin(), steps.end(), 8) == world);
  CHECK(steps.size() == 3 * static_cast<std::size_t>(world));

  const std::int64_t resume = 8;  // epoch 1, index 1
  const auto resumed = train_ranks(config, {dir.path, 0, resume, {}});
  for (int rank = 0; rank < world; ++rank) {
    INFO("rank " << rank);
    const auto expected = by_step(whole.at(rank).records, resume);
    CHECK(by_step(resumed.at(rank).records, 0) == expected);  // bit for bit
    CHECK(recorded_keys(resumed.at(rank).records, 0) == recorded_keys(whole.at(rank).records, resume));
    if (rank < 2) {
      CHECK(resumed.at(rank).result.parameter_hash == whole.at(rank).result.parameter_hash);
      CHECK(expected.size() > 10);
    } else {
      // The server's rounds from 8 on: what it sent, bit for bit.
      std::vector<double> sent_whole, sent_resumed;
      for (const auto& r : whole.at(rank).records)
        if (r.key == keys::kBytesSent && r.step >= resume) sent_whole.push_back(r.value);
      for (const auto& r : resumed.at(rank).records)
        if (r.key == keys::kBytesSent) sent_resumed.push_back(r.value);
      CHECK(sent_resumed == sent_whole);
      CHECK(sent_whole.size() == 6);
    }
  }
}

TEST_CASE("an asynchronous parameter server refuses to checkpoint", "[train][checkpoint][ps]") {
  engine::EngineCatalog catalog;
  auto config = stateful_run("synchronous");
  config.topology = catalog.resolve({"topology", "parameter_server", {}});
  CHECK(catalog.why_not_checkpointed(config).empty());
  config.schedule = catalog.resolve({"schedule", "async", {}});
  CHECK_THAT(catalog.why_not_checkpointed(config), Catch::Contains("asynchronous parameter server"));
  config.topology = catalog.resolve({"topology", "allreduce", {}});
  config.schedule = catalog.resolve({"schedule", "synchronous", {}});
  CHECK(catalog.why_not_checkpointed(config).empty());
}

TEST_CASE("a checkpoint of another configuration or rank is refused", "[train][checkpoint]") {
  auto config = stateful_run("synchronous");
  config.workers = 1;
  config.epochs = 1;
  config.max_steps = 3;
  TempDir dir;
  testing::run_ranks(1, std::chrono::seconds(60), [&](comm::Communicator& comm) {
    engine::EngineCatalog catalog;
    MemorySink sink;
    train::run_worker(config, catalog.build(config, comm.rank()), comm, sink, {}, nullptr, {dir.path, 2, -1, {}});
  });
  REQUIRE(std::filesystem::exists(train::checkpoint_path(dir.path, 0, 2)));
  auto other = config;
  other.optimizer.fields["lr"] = 0.1;
  std::string message;
  testing::run_ranks(1, std::chrono::seconds(60), [&](comm::Communicator& comm) {
    engine::EngineCatalog catalog;
    MemorySink sink;
    message = thrown<ConfigError>([&] {
      train::run_worker(other, catalog.build(other, comm.rank()), comm, sink, {}, nullptr, {dir.path, 0, 2, {}});
    });
  });
  CHECK_THAT(message, Catch::Contains("belongs to another run configuration"));
  // Truncated: the reader notices.
  const std::string path = train::checkpoint_path(dir.path, 0, 2);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  testing::run_ranks(1, std::chrono::seconds(60), [&](comm::Communicator& comm) {
    engine::EngineCatalog catalog;
    MemorySink sink;
    message = thrown<ConfigError>([&] {
      train::run_worker(config, catalog.build(config, comm.rank()), comm, sink, {}, nullptr, {dir.path, 0, 2, {}});
    });
  });
  CHECK_THAT(message, Catch::Contains("does not fit this run") && Catch::Contains(path));
}

TEST_CASE("a training loss that turns NaN or explodes ends the run with DivergedError", "[train][diverged]") {
  auto config = stateful_run("synchronous");
  config.workers = 1;
  config.epochs = 1;
  config.max_steps = 40;
  config.compressor = engine::EngineCatalog().resolve({"compressor", "none", {}});
  config.optimizer.fields["lr"] = 1e4;
  SECTION("only NaN / inf count when the factor is 0") {
    config.divergence_factor = 0;
    std::vector<MetricRecord> records;
    std::string message;
    testing::run_ranks(1, std::chrono::seconds(60), [&](comm::Communicator& comm) {
      engine::EngineCatalog catalog;
      MemorySink sink;
      message = thrown<DivergedError>([&] { train::run_worker(config, catalog.build(config, comm.rank()), comm, sink); });
      records = sink.records();
    });
    CHECK_THAT(message, Catch::StartsWith("training loss") && Catch::Contains("on worker 0"));
    std::size_t losses = 0;
    bool last_finite = true;
    for (const auto& r : records)
      if (r.key == "train_loss") {
        ++losses;
        last_finite = std::isfinite(r.value);
      }
    CHECK(losses < 40);
    CHECK_FALSE(last_finite);  // the loss that diverged was recorded
  }
  SECTION("a loss above divergence_factor x the first one") {
    config.divergence_factor = 2;
    std::string message;
    testing::run_ranks(1, std::chrono::seconds(60), [&](comm::Communicator& comm) {
      engine::EngineCatalog catalog;
      MemorySink sink;
      message = thrown<DivergedError>([&] { train::run_worker(config, catalog.build(config, comm.rank()), comm, sink); });
    });
    CHECK_THAT(message, Catch::Contains("above divergence_factor 2 x the first step's loss"));
  }
}

TEST_CASE("a checkpoint write that fails on a full disk leaves no temporary file", "[train][checkpoint][needs-root]") {
  if (::geteuid() != 0) {
    LACONIC_SKIP("not root: no small tmpfs to fill; the full-disk case is not run");
  }
  const auto dir = std::filesystem::temp_directory_path() / ("laconic-full-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0) {
    std::filesystem::remove_all(dir);
    LACONIC_SKIP("cannot mount a tmpfs here; the full-disk case is not run");
  }
  const std::string path = (dir / "rank-0.step-1.ckpt").string();
  CHECK_THROWS_WITH(laconic::train::write_file_atomically(path, std::vector<std::uint8_t>(1 << 20, 7)),
                    Catch::Contains("No space left on device"));
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  CHECK_FALSE(std::filesystem::exists(path));
  ::umount2(dir.c_str(), MNT_DETACH);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a checkpoint's file name gives back the step it was named with, and only such a name does",
          "[train][checkpoint]") {
  const std::string path = train::checkpoint_path("/some/dir", 3, 1200);
  const std::string name = std::filesystem::path(path).filename().string();
  CHECK(name == "rank-3.step-1200.ckpt");
  CHECK(train::checkpoint_step_of(name) == 1200);
  for (const char* other : {"rank-3.step-1200.ckpt.tmp", "server.step-5.ckpt", "rank-1.step-x.ckpt", "notes.txt"})
    CHECK_FALSE(train::checkpoint_step_of(other));
}

TEST_CASE("a configuration's fingerprint is the one checkpoints written before carry", "[train][checkpoint]") {
  // As config_fingerprint() was written before the one hasher: a checkpoint on disk carries it.
  const auto config = stateful_run("synchronous");
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : config.to_json().dump()) h = (h ^ static_cast<std::uint8_t>(c)) * 1099511628211ull;
  CHECK(train::config_fingerprint(config) == str_cat(std::hex, h));
}
