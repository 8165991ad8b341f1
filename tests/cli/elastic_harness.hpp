#pragma once
// What the elastic = true tests share: their experiment and the loss rows of a run.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "storage/database.hpp"
#include "storage/queries.hpp"

namespace laconic::testing {

/// Three workers, an MLP on synthetic data, `epochs` epochs of 200 steps, `timeout` seconds;
/// `elastic` is the field's value, `extra` more fields.
inline std::string elastic_experiment(const std::string& extra = "", const std::string& elastic = "true",
                                      int epochs = 12, int timeout = 30) {
  return "experiment {\n"
         "  name = \"elastic\",\n"
         "  data = synthetic { shape = {1, 8, 8}, n = 9600, test_n = 64 },\n"
         "  model = mlp { sizes = {64, 64, 10} },\n"
         "  optimizer = sgd { lr = 0.05, momentum = 0.9 },\n"
         "  batch_size = 16, workers = 3, epochs = " +
         std::to_string(epochs) + ", eval_limit = 64, timeout = " + std::to_string(timeout) +
         ",\n"
         "  elastic = " +
         elastic + ",\n" + extra + "}\n";
}

/// (worker, step) -> the run's train_loss rows.
inline std::map<std::pair<std::int64_t, std::int64_t>, std::vector<double>> loss_rows(storage::Database& db,
                                                                                      std::int64_t run_id) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<double>> out;
  for (const auto& m : storage::metrics_of(db, run_id, "train_loss")) out[{m.worker, m.step}].push_back(m.value);
  return out;
}

}  // namespace laconic::testing
