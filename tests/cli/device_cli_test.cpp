// device = cpu() / cuda() / auto() (issue 69) as a user meets it without a GPU: auto() trains on
// the CPU and the run's resolved fact and the report say so; cuda() is refused with the reason;
// cpu { staged = true } takes a GPU run's copies of the gradient (device -> host -> device) and
// trains bit for bit as cpu() does. No GPU ran anything here: the GPU path itself is checked by
// bench/gpu_train_check.sh on a machine with one.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <tuple>

#include "storage/database.hpp"
#include "storage/statement.hpp"

#include "cli_harness.hpp"

using namespace laconic::testing;

TEST_CASE("device = auto() trains on the CPU and says so; device = cuda() is refused with the reason",
          "[cli][device]") {
  const std::string dir = make_temp_dir();
  const auto experiment = [](const std::string& device) {
    return "experiment {\n"
           "  name = \"dev\",\n"
           "  data = synthetic { shape = {1, 8, 8}, n = 256, test_n = 64 },\n"
           "  model = mlp { sizes = {64, 16, 10} },\n"
           "  optimizer = sgd { lr = 0.1 },\n"
           "  batch_size = 16, workers = 2, max_steps = 4, eval_limit = 64, timeout = 30,\n"
           "  device = " +
           device +
           ",\n"
           "}\n";
  };
  write_file(dir + "/gpu.lua", experiment("cuda { index = 0 }"));
  const auto refused = run_laconic(dir, "check gpu.lua", 120);
  CHECK(refused.status != 0);
  if (run_laconic(dir, "--version", 60).out.find("LibTorch built without CUDA") != std::string::npos)
    CHECK_THAT(refused.err, Catch::Contains("device = cuda() needs a LibTorch built with CUDA that sees a GPU"));
  else
    WARN("this LibTorch has CUDA: the refusal without one was not checked");
  write_file(dir + "/auto.lua", experiment("auto()"));
  const auto run = run_laconic(dir, "run auto.lua --db a.db --quiet", 120);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  const auto shown = run_laconic(dir, "show 1 --db a.db", 60);
  CHECK_THAT(shown.out, Catch::Contains("\"device\":\"cpu\""));
  CHECK_THAT(shown.out, Catch::Contains("\"name\": \"auto\""));  // the configuration keeps what was asked
  const auto report = run_laconic(dir, "report dev --db a.db --out rep", 120);
  REQUIRE(report.status == 0);
  CHECK_THAT(read_file(dir + "/rep/report.md"), Catch::Contains("- trained on: cpu (every run)"));
  std::filesystem::remove_all(dir);
}

// The controller resolves `device` before it forks the workers: had it initialized CUDA to ask, every
// forked worker would fail with "CUDA error: initialization error" (seen on an H200 node).
TEST_CASE("device = cuda() trains with two forked workers on GPU 0", "[cli][device][gpu]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/gpu.lua",
             "experiment { name = \"gpu\", data = synthetic { shape = {1, 8, 8}, n = 256, test_n = 64 },\n"
             "  model = mlp { sizes = {64, 16, 10} }, optimizer = sgd { lr = 0.1 }, batch_size = 16,\n"
             "  workers = 2, max_steps = 4, eval_limit = 64, timeout = 60, device = cuda() }\n");
  if (run_laconic(dir, "check gpu.lua", 120).status != 0) {
    WARN("skipped: this LibTorch has no CUDA or sees no GPU; nothing trained on a GPU here");
  } else {
    const auto run = run_laconic(dir, "run gpu.lua --db g.db --quiet", 300);
    INFO(run.out << run.err);
    CHECK(run.status == 0);
    CHECK_THAT(run_laconic(dir, "show 1 --db g.db", 60).out, Catch::Contains("\"device\":\"cuda:0\""));
  }
  std::filesystem::remove_all(dir);
}

namespace {

// (key, step, worker) -> value of the rows of experiment `name`'s one run.
std::map<std::tuple<std::string, std::int64_t, std::int64_t>, double> rows_of_run(const std::string& path,
                                                                                  const std::string& name) {
  auto db = laconic::storage::Database::open_read_only(path);
  laconic::storage::Statement q(db->handle(),
                                "SELECT m.key, m.step, m.worker, m.value FROM metrics m JOIN runs r ON r.id = m.run_id "
                                "JOIN experiments e ON e.id = r.experiment_id WHERE e.name = ?1 AND m.key IN "
                                "('train_loss', 'bytes_sent', 'test_accuracy', "
                                "'payload_bytes', 'test_loss')");
  q.bind_text(1, name);
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, double> out;
  while (q.step()) out[{q.column_text(0), q.column_int64(1), q.column_int64(2)}] = q.column_double(3);
  return out;
}

}  // namespace

TEST_CASE("device = cpu { staged = true } trains bit for bit as cpu() through a GPU run's copies", "[cli][device]") {
  const std::string dir = make_temp_dir();
  const auto experiment = [](const std::string& name, const std::string& device, const std::string& compressor) {
    return "experiment {\n  name = \"" + name +
           "\",\n"
           "  data = synthetic { shape = {1, 8, 8}, n = 256, test_n = 64 },\n"
           "  model = mlp { sizes = {64, 16, 10} },\n"
           "  optimizer = sgd { lr = 0.1, momentum = 0.9 },\n"
           "  compressor = " +
           compressor +
           ",\n"
           "  batch_size = 16, workers = 2, epochs = 2, eval_limit = 64, timeout = 30,\n"
           "  device = " +
           device + ",\n}\n";
  };
  write_file(dir + "/plain.lua", experiment("plain", "cpu()", "topk { ratio = 0.1 }"));
  write_file(dir + "/staged.lua", experiment("staged", "cpu { staged = true }", "topk { ratio = 0.1 }"));
  for (const char* name : {"plain", "staged"}) {
    const auto run = run_laconic(dir, std::string("run ") + name + ".lua --db d.db --quiet --checkpoint-every 5", 180);
    INFO(run.out << run.err);
    REQUIRE(run.status == 0);
  }
  const auto plain = rows_of_run(dir + "/d.db", "plain");
  const auto staged = rows_of_run(dir + "/d.db", "staged");
  CHECK(plain.size() > 60);  // 2 workers x 16 steps x 3 keys, and the evaluations
  CHECK(plain == staged);
  const auto shown = run_laconic(dir, "show 2 --db d.db", 60);
  CHECK_THAT(shown.out, Catch::Contains("\"codecs_on\":\"cpu\""));

  write_file(dir + "/overlap.lua",
             experiment("overlap", "cpu { staged = true }", "none(),\n  topology = allreduce { overlap = true }"));
  const auto refused = run_laconic(dir, "check overlap.lua", 120);
  CHECK(refused.status != 0);
  CHECK_THAT(refused.err, Catch::Contains("cannot overlap the exchange with backward yet"));
  std::filesystem::remove_all(dir);
}
