// laconic report --hardware: a run's step projected onto a hardware profile (reports/hardware_step.hpp)
// against hand computation (compute from the profile, compress per call and per element once and
// decode per payload, the recorded messages on the link, what backward hides of an overlapped
// exchange, what DiLoCo's inner steps hide of one under diloco { overlap }), why a run cannot be
// projected, and the report's section and break-even columns.
#include <catch2/catch.hpp>

#include "reports/hardware_step.hpp"
#include "reports/report.hpp"
#include "tests/reports/fixture.hpp"

using namespace laconic;
using namespace laconic::reports;
using namespace laconic::reports::testing;

namespace {


/// lenet5 at batch 64 with the fixture's 62500 parameters, 10x faster than the fixture's compute.
HardwareProfile profile() {
  return hardware_profile_from_json(nlohmann::json::parse(R"({
    "laconic_hardware_profile": 1, "name": "Example GPU", "device": "cuda",
    "models": [{"model": "lenet5", "batch_size": 64, "parameters": 62500,
                "forward": 0.001, "backward": 0.002, "optimizer": 0.0005,
                "gradient_ready": [{"after": 0.0005, "elements": 40000}, {"after": 0.0015, "elements": 22500}]}],
    "compressors": {"topk": {"compress": {"per_call": 1e-4, "per_element": 1e-8},
                             "decompress": {"per_element": 1e-9}}}
  })"),
                                    "example.json");
}

RunData topk_run() {
  RunData run;
  run.run.model = "lenet5";
  run.run.batch_size = 64;
  run.run.compressor = "topk";
  run.run.workers = 2;
  run.model_parameters = 62500;
  run.messages = 4;
  run.link_bytes = 1250;
  return run;
}

LinkSpec gigabit() { return parse_link("1Gbit,50us"); }

}  // namespace

TEST_CASE("a step on other hardware: the profile's compute and codec, the recorded messages on the link",
          "[reports][hardware]") {
  const HardwareProfile p = profile();
  RunData run = topk_run();
  const HardwareStep step = hardware_step(run, p, gigabit());
  REQUIRE(step.missing.empty());
  CHECK(step.compute == Approx(0.0035));
  // compress once (100 us + 62500 x 10 ns) and, without decoded_payloads recorded, decode one
  // payload per worker (2 x 62500 x 1 ns)
  CHECK(step.codec == Approx(1e-4 + 62500 * 1e-8 + 2 * 62500 * 1e-9));
  const double link = 4 * 50e-6 + 8 * 1250 / (1e9 * kTcpPayloadFraction);
  CHECK(step.communicate == Approx(link));
  CHECK(step.hidden == 0);
  CHECK(step.total() == Approx(0.0035 + 0.00085 + link));
  run.decoded_payloads = 1;  // recorded: one summed payload
  CHECK(hardware_step(run, p, gigabit()).codec == Approx(1e-4 + 62500 * 1e-8 + 62500 * 1e-9));
}

TEST_CASE("an overlapped exchange starts when its first bucket is ready and hides behind the rest of backward",
          "[reports][hardware]") {
  const HardwareProfile p = profile();
  RunData run = topk_run();
  run.overlapped = 0.001;
  const HardwareStep step = hardware_step(run, p, gigabit());
  // all 62500 elements (less than 1 MiB) are ready at 1.5 ms; backward ends at 2 ms
  CHECK(step.hidden == Approx(0.0005));
  CHECK(step.total() == Approx(step.compute + step.codec + step.communicate - 0.0005));
  // a slow link: at most the exchange itself is hidden
  const HardwareStep fast = hardware_step(run, p, parse_link("100Gbit,0us"));
  CHECK(fast.hidden == Approx(std::min(0.0005, fast.codec + fast.communicate)));
}

TEST_CASE("an exchange that overlapped DiLoCo's inner steps hides under their compute at the profile's speed",
          "[reports][hardware]") {
  // Recorded: 0.035 s of compute a step here, of which 0.0001 s a step was the budget the
  // exchanges ran under; the profile computes 10x faster, so 0.00001 s a step hides them there.
  const HardwareProfile p = profile();
  RunData run = topk_run();
  run.compute = 0.035;
  run.overlap_budget = 0.0001;
  run.overlapped = 0.0001;  // recorded as well: it is not backward's to hide
  const double link = 4 * 50e-6 + 8 * 1250 / (1e9 * kTcpPayloadFraction);
  const HardwareStep step = hardware_step(run, p, gigabit());
  CHECK(step.communicate == Approx(link - 0.00001));
  CHECK(step.hidden == 0);
  run.overlap_budget = 1.0;  // more than the exchange: nothing of it shows
  CHECK(hardware_step(run, p, gigabit()).communicate == 0);
}

TEST_CASE("a run the profile does not cover says why it is not projected", "[reports][hardware]") {
  const HardwareProfile p = profile();
  RunData run = topk_run();
  run.run.batch_size = 32;
  HardwareStep step = hardware_step(run, p, gigabit());
  CHECK(std::isnan(step.total()));
  CHECK(step.missing ==
        "the profile has no lenet5 at batch 32 with 62500 parameters (it has lenet5 (batch 64, 62500 parameters))");
  run = topk_run();
  run.run.compressor = "qsgd";
  CHECK(hardware_step(run, p, gigabit()).missing == "the profile has no costs for compressor qsgd");
  // A full-precision exchange costs nothing without an entry: as its resolved run says, whatever
  // its compressor's name; for a run recorded before that fact, when it sent the dense bytes.
  run.run.compressor = "none";
  ResolvedRun resolved;
  resolved.workers = 2;
  resolved.world_size = 2;
  resolved.compressor.full_precision = true;
  run.facts.resolved = resolved;
  CHECK(hardware_step(run, p, gigabit()).codec == 0);
  run.facts.resolved->compressor.full_precision = false;
  CHECK(hardware_step(run, p, gigabit()).missing == "the profile has no costs for compressor none");
  run.facts.resolved.reset();
  run.bytes_sent = run.bytes_dense = 250000;
  CHECK(hardware_step(run, p, gigabit()).codec == 0);
  run.bytes_sent = 125000;  // it compressed
  CHECK_FALSE(hardware_step(run, p, gigabit()).missing.empty());
  run = topk_run();
  run.messages = kNaN;
  CHECK_THAT(hardware_step(run, p, gigabit()).missing, Catch::Contains("no messages"));
}

TEST_CASE("laconic report --hardware: the steps there next to those here, and the break-even there",
          "[reports][hardware]") {
  TempDir dir("report-hardware");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto experiment = recorder.add_experiment("hw", "hw.lua", "cafe");
  for (std::int64_t seed : {1, 2}) {
    record_run(*db, recorder, experiment, "hw", dense_with_messages(seed, {0.5, 0.85}));
    record_run(*db, recorder, experiment, "hw", topk_with_messages(seed, {0.5, 0.85}));
  }
  ReportOptions options{.gnuplot = kNoFigures, .links = {parse_link("10Gbit")}};
  options.hardware = profile();
  const auto paths = write_report(*db, "hw", dir.file("out"), options);
  const std::string md = read_text(paths.markdown);
  INFO(md);
  CHECK_THAT(md, Catch::Contains("## On Example GPU (projected)"));
  CHECK_THAT(md, Catch::Contains("- hardware: Example GPU (example.json; projected)"));
  // Here the dense step computes 35 ms, there 3.5 ms.
  CHECK_THAT(md, Catch::Contains("none: a step computes in 0.0035 s there against 0.035 s measured here (10.0x)"));
  const std::string steps = read_text(dir.file("out/tables/hardware_step.csv"));
  CHECK_THAT(steps, Catch::Contains("topk ratio=0.01,0.035,0.0035,0.004,"));
  // The answer's table gains the scan on that hardware, and the summary its verdicts there.
  CHECK_THAT(md, Catch::Contains("the same on Example GPU (projected)"));
  CHECK_THAT(md, Catch::Contains("On Example GPU with 10Gbit, 50 us (projected from the hardware profile)"));
  const std::string target = read_text(dir.file("out/tables/hardware_target.csv"));
  CHECK_THAT(target, Catch::Contains("break_even_there_bit_s"));
}

TEST_CASE("laconic report --hardware names what the profile lacks", "[reports][hardware]") {
  TempDir dir("report-hardware-missing");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto experiment = recorder.add_experiment("hw", "hw.lua", "cafe");
  RunSpec mlp = dense_with_messages(1, {0.5, 0.85});
  mlp.model = "mlp";
  record_run(*db, recorder, experiment, "hw", mlp);
  ReportOptions options{.gnuplot = kNoFigures};
  options.hardware = profile();
  const std::string md = read_text(write_report(*db, "hw", dir.file("out"), options).markdown);
  CHECK_THAT(md, Catch::Contains("Not projected (-): none: the profile has no mlp at batch 64 with 62500 parameters"));
}
