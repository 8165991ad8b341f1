// The whole report.md of a fixed database against tests/reports/golden/report.md.
// After a deliberate change of the report, regenerate the file with
//   LACONIC_UPDATE_GOLDEN=1 build/tests/reports/laconic_reports_tests "[golden]"
// and review the diff.
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>

#include "reports/report.hpp"
#include "tests/reports/fixture.hpp"
#include "skip.hpp"

using namespace laconic;
using namespace laconic::reports;
using namespace laconic::reports::testing;

namespace {

// 2 models x 3 compressors (dense, a sparsifier, a quantizer) x 2 seeds, and a failed run.
void record_golden(storage::Database& db) {
  storage::Recorder recorder(db);
  const auto e = recorder.add_experiment("golden", "experiments/golden.lua", "0123456789abcdef");
  struct Method {
    const char* name;
    const char* field;
    double value;
    double sent;  // bytes per step and worker
    double compress;
  };
  const Method methods[] = {
      {"none", nullptr, 0, 250000, 0}, {"topk", "ratio", 0.01, 5000, 0.004}, {"qsgd", "levels", 4, 31250, 0.002}};
  int index = 0;
  for (const char* model : {"lenet5", "mlp"})
    for (const Method& m : methods)
      for (std::int64_t seed : {1, 2}) {
        ++index;
        RunSpec spec;
        spec.model = model;
        spec.compressor = m.name;
        spec.seed = seed;
        spec.swept = {{"model", Value{std::string(model)}}, {"compressor", Value{std::string(m.name)}}};
        spec.name = std::string("model=") + model + ",compressor=" + m.name;
        if (m.field) {
          const Value v = std::string(m.field) == "levels" ? Value{static_cast<std::int64_t>(m.value)} : Value{m.value};
          spec.swept[std::string("compressor.") + m.field] = v;
          spec.compressor_fields = {{m.field, v}};
          spec.name += std::string(",") + m.field + "=" + (m.field == std::string("levels") ? "4" : "0.01");
        }
        spec.name += ",seed=" + std::to_string(seed);
        const double quality = (std::string(model) == "mlp" ? 0.05 : 0) + (seed == 2 ? 0.02 : 0);
        spec.accuracy = {0.5 - index * 0.01 + quality, 0.8 - (m.compress * 10) + quality,
                         0.85 - m.compress * 10 + quality};
        spec.epoch_time = {10.0 + seed, 11.0, 12.0};
        spec.bytes_sent = spec.payload_bytes = m.sent;
        spec.compress = m.compress;
        spec.decompress = m.compress / 2;
        spec.communicate = 0.001 * m.sent / 5000;
        spec.projected = 0.0004 * m.sent / 5000;
        spec.model_parameters = std::string(model) == "mlp" ? 125000 : 62500;
        record_run(db, recorder, e, "golden", spec);
      }
  RunSpec dgc;
  dgc.name = "model=lenet5,compressor=dgc,seed=1";
  const auto failed = recorder.add_run(e, config_of("golden", dgc));
  recorder.start_run(failed);
  recorder.finish_run(failed, storage::RunStatus::Failed, "worker 1: connection reset");
  storage::Statement times(db.handle(), "UPDATE runs SET started = 1000, ended = 1005 WHERE id = ?1");
  times.bind_int64(1, failed);
  times.run();
}

}  // namespace

TEST_CASE("report.md of a fixed database matches the golden file", "[reports][golden][needs-gnuplot]") {
  if (std::system("gnuplot -e 'exit' >/dev/null 2>&1") != 0)
    LACONIC_SKIP("gnuplot is not installed; the golden report names drawn figures, so it is not compared");
  TempDir dir("golden");
  auto db = storage::Database::open(dir.file("runs.db"));
  record_golden(*db);
  const auto paths = write_report(*db, "golden", dir.file("out"));
  const std::string markdown = read_text(paths.markdown);
  const std::string golden_path = std::string(LACONIC_REPORTS_GOLDEN_DIR) + "/report.md";
  if (const char* update = std::getenv("LACONIC_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(golden_path, std::ios::binary) << markdown;
    WARN("rewrote " << golden_path);
  }
  const std::string golden = read_text(golden_path);
  REQUIRE_FALSE(golden.empty());
  CHECK(markdown == golden);
  // Every table has its CSV.
  CHECK(paths.csv.size() == 8);
}
