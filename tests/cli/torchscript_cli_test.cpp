// Your model, your optimizer, end to end through `laconic run`: LeNet-5 written in PyTorch,
// exported with scripts/export-torchscript.py and given the built-in lenet5's initial weights
// (seed 1), trains with 2 workers for an epoch of Fashion-MNIST to the built-in's numbers; a
// scripted model with batch norm and dropout trains with PowerSGD under Adam and LAMB, in both
// exchange modes; the experiment's paths are relative to its file.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>

#include <torch/script.h>
#include "cli_harness.hpp"

#include "engine/train/builtin.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

void export_model(const std::string& cls, const std::string& out) {
  const std::string command = std::string("/usr/bin/python3 '") + LACONIC_SOURCE_DIR +
                              "/scripts/export-torchscript.py' '" + LACONIC_SOURCE_DIR + "/examples/lenet5.py:" + cls +
                              "' --input 1,28,28 --out '" + out + "' > '" + out + ".log' 2>&1";
  INFO(command << "\n" << read_file(out + ".log"));
  REQUIRE(std::system(command.c_str()) == 0);
}

// run id -> train_loss of worker 0, step by step.
std::map<std::int64_t, std::vector<double>> losses_by_step(const std::string& path) {
  auto db = storage::Database::open_read_only(path);
  storage::Statement rows(db->handle(),
                          "SELECT run_id, value FROM metrics WHERE key = 'train_loss' AND worker = 0 "
                          "ORDER BY run_id, step");
  std::map<std::int64_t, std::vector<double>> out;
  while (rows.step()) out[rows.column_int64(0)].push_back(rows.column_double(1));
  return out;
}

// run id -> "STATUS VALUE" of the run's last `key`.
std::map<std::int64_t, std::string> statuses(const std::string& path, const std::string& key) {
  auto db = storage::Database::open_read_only(path);
  storage::Statement rows(db->handle(),
                          "SELECT r.id, r.name || ': ' || r.status || ' ' || coalesce(s.last, '') "
                          "FROM runs r LEFT JOIN run_summary s ON s.run_id = r.id AND s.key = '" +
                              key + "'");
  std::map<std::int64_t, std::string> out;
  while (rows.step()) out[rows.column_int64(0)] = rows.column_text(1);
  return out;
}

// The number after "FINISHED " in a statuses() entry.
double value_of(const std::string& status) { return std::stod(status.substr(status.find("FINISHED ") + 9)); }

}  // namespace

TEST_CASE("LeNet-5 written in PyTorch trains to the built-in lenet5's numbers from the same initial weights",
          "[cli][e2e][torchscript][slow]") {
  const auto dir = make_temp_dir();
  std::filesystem::create_directories(dir + "/exp");
  export_model("LeNet5", dir + "/exp/python.pt");
  {
    // The built-in's initial weights for seed 1 (torch::manual_seed(seed), then the model, as a
    // worker builds it) written into the scripted module.
    auto scripted = torch::jit::load(dir + "/exp/python.pt");
    torch::manual_seed(1);
    auto builtin = train::builtin_models().create({"model", "lenet5", {}});
    torch::NoGradGuard no_grad;
    const auto weights = builtin->named_parameters();
    std::size_t copied = 0;
    for (const auto& p : scripted.named_parameters()) {
      REQUIRE(weights.contains(p.name));
      p.value.copy_(weights[p.name]);
      ++copied;
    }
    REQUIRE(copied == weights.size());
    scripted.save(dir + "/exp/lenet5.pt");
  }
  write_file(dir + "/exp/same.lua",
             "experiment {\n"
             "  name = 'same',\n"
             "  model = sweep { lenet5(), torchscript { file = 'lenet5.pt', input = {1, 28, 28}, classes = 10 } },\n"
             "  optimizer = sgd { lr = 0.05, momentum = 0.9 },\n"
             "  batch_size = 64, workers = 2, epochs = 1,\n"
             "}\n");
  // From the directory above the file: the model's path is relative to the experiment file.
  const auto r = run_laconic(dir, "run exp/same.lua --db same.db --quiet", 600);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto accuracy = statuses(dir + "/same.db", "test_accuracy");  // run 1 built-in, run 2 scripted
  INFO(accuracy.at(1) << "\n" << accuracy.at(2));
  REQUIRE_THAT(accuracy.at(1), Catch::StartsWith("model=lenet5,seed=1: FINISHED"));
  REQUIRE_THAT(accuracy.at(2), Catch::StartsWith("model=torchscript") && Catch::Contains("FINISHED"));
  const double builtin = value_of(accuracy.at(1)), scripted = value_of(accuracy.at(2));
  CHECK(builtin > 0.8);
  CHECK(scripted == Approx(builtin).margin(0.0005));  // at most 5 of 10,000 test images apart
  const auto steps = losses_by_step(dir + "/same.db");
  const auto& a = steps.at(1);
  const auto& b = steps.at(2);
  REQUIRE(a.size() == b.size());
  REQUIRE(a.size() == 469);
  // LibTorch's C++ modules and TorchScript call the same kernels: on this machine every loss
  // of the epoch came out bit-identical; the tolerance leaves room for a summation order.
  for (std::size_t t = 0; t < a.size(); ++t) CHECK(b[t] == Approx(a[t]).epsilon(1e-6));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a scripted model with batch norm trains with PowerSGD under Adam and LAMB, in both exchange modes",
          "[cli][e2e][torchscript]") {
  const auto dir = make_temp_dir();
  export_model("SmallBatchNormNet", dir + "/bn.pt");
  write_file(dir + "/bn.lua",
             "experiment {\n"
             "  name = 'bn',\n"
             "  model = torchscript { file = 'bn.pt', input = {1, 28, 28}, classes = 10 },\n"
             "  optimizer = sweep { adam { lr = 0.003 }, adamw { lr = 0.003 }, lamb { lr = 0.01 } },\n"
             "  compressor = powersgd { rank = 2 },\n"
             "  exchange = sweep { 'gradient', 'update' },\n"
             "  batch_size = 32, workers = 2, max_steps = 40, eval_limit = 500,\n"
             "}\n");
  const auto r = run_laconic(dir, "run bn.lua --db bn.db --quiet", 600);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto runs = losses_by_step(dir + "/bn.db");
  CHECK(runs.size() == 6);
  for (const auto& [id, loss] : runs) {
    INFO("run " << id);
    REQUIRE(loss.size() == 40);
    double first = 0, last = 0;
    for (std::size_t t = 0; t < 5; ++t) first += loss[t] / 5;
    for (std::size_t t = 35; t < 40; ++t) last += loss[t] / 5;
    CHECK(last < 0.8 * first);  // it learns
  }
  for (const auto& [id, status] : statuses(dir + "/bn.db", "test_accuracy"))
    CHECK_THAT(status, Catch::Contains(": FINISHED "));
  // Editing the model changes the experiment's hash: --resume refuses the changed file.
  export_model("LeNet5", dir + "/bn.pt");
  const auto again = run_laconic(dir, "run bn.lua --db bn.db --resume --quiet", 120);
  CHECK(again.status == 2);
  CHECK_THAT(again.err, Catch::Contains("changed since it was recorded"));
  std::filesystem::remove_all(dir);
}
