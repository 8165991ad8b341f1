#pragma once
// A sweep whose answer holds every verdict, recorded without training: seven compressors over two
// seeds on 1Gbit, 50us (fixture.hpp's runs: 2 workers, 2 epochs of 2 steps, an evaluation at each
// epoch's end). none is the baseline and sets the target, 0.85 less 0.5 points:
//   fp16      none's accuracy and compute, half its bytes: within noise
//   topk      reaches the target an epoch sooner: faster
//   powersgd  20 ms of compression a step: slower
//   qsgd      one seed reaches it an epoch sooner, the other never: inconclusive
//   bf16      20 ms more compression on one seed than on the other: inconclusive, with how many
//             more seeds would decide it
//   signsgd   never reaches it: not reached
// docs/reports.md shows its answer (`ui_fixtures verdicts DB`, then `laconic report verdicts`).
#include <string>
#include <vector>

#include "tests/reports/fixture.hpp"

namespace laconic::reports::testing {

/// Seed `seed` of `compressor`: `bytes` a step and worker in `messages` messages, `compress`
/// seconds of compression a step, accuracy per epoch.
inline RunSpec verdict_run(const std::string& compressor, std::int64_t seed, std::vector<double> accuracy,
                           double bytes, double messages, double compress) {
  RunSpec spec = dense(seed, std::move(accuracy));
  spec.name = "compressor=" + compressor + ",seed=" + std::to_string(seed);
  spec.swept = {{"compressor", Value{compressor}}};
  spec.compressor = compressor;
  spec.bytes_sent = spec.payload_bytes = bytes;
  spec.messages = messages;
  spec.link_bytes = bytes / 2;
  spec.compress = compress;
  spec.forward = seed == 1 ? 0.010 : 0.0101;  // a little spread over seeds, so that intervals have a width
  return spec;
}

/// The runs of the sweep, in plan order.
inline std::vector<RunSpec> verdict_sweep() {
  std::vector<RunSpec> runs;
  for (std::int64_t seed : {1, 2}) {
    runs.push_back(verdict_run("none", seed, {0.80, 0.85}, 250000, 2, 0));
    runs.push_back(verdict_run("fp16", seed, {0.80, 0.85}, 125000, 2, 0));
    runs.push_back(verdict_run("topk", seed, {0.85, 0.86}, 2500, 4, 0.004));
    runs.push_back(verdict_run("powersgd", seed, {0.80, 0.85}, 5000, 8, 0.020));
    runs.push_back(verdict_run("qsgd", seed, {seed == 1 ? 0.85 : 0.80, seed == 1 ? 0.85 : 0.844}, 31250, 4, 0.002));
    runs.push_back(verdict_run("bf16", seed, {0.80, 0.85}, 125000, 2, seed == 1 ? 0 : 0.020));
    runs.push_back(verdict_run("signsgd", seed, {0.70, 0.80}, 7813, 4, 0.001));
  }
  return runs;
}

/// Records the sweep as experiment `name` into `db`.
inline void record_verdict_sweep(storage::Database& db, const std::string& name) {
  storage::Recorder recorder(db);
  const auto experiment = recorder.add_experiment(name, name + ".lua", "cafe");
  for (const RunSpec& spec : verdict_sweep()) record_run(db, recorder, experiment, name, spec);
}

}  // namespace laconic::reports::testing
