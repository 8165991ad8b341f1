// Errors of experiment files: each message says what, where (file:line) and what is valid.
#include <catch2/catch.hpp>

#include "engine/core/error.hpp"
#include "fake_catalog.hpp"
#include "lua/experiment.hpp"
#include "lua/pattern_guard.hpp"

#include <chrono>
#include <cmath>

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using laconic::lua::LoadOptions;
using laconic::lua::testing::FakeCatalog;
using laconic::lua::testing::load_error;
using laconic::lua::testing::TempDir;

TEST_CASE("a syntax error names the file and line", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("syntax.lua", "experiment {\n  name = 'x',\n  epochs = 1 +,\n}\n");
  CHECK_THAT(load_error(path, catalog), StartsWith(path + ":3: unexpected symbol near ','"));
}

TEST_CASE("a missing comma between fields is named at the line that lacks it, not the next", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path =
      dir.write("comma.lua", "experiment {\n  name = 'x',\n  epochs = 1  -- one pass\n\n  max_steps = 5,\n}\n");
  CHECK(load_error(path, catalog) ==
        path + ":3: missing ',' after line 3? (Lua: '}' expected (to close '{' at line 1) near 'max_steps' on line 5)");
}

TEST_CASE("an experiment field's wrong value is reported at the field's line", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("line.lua",
                              "-- a comment\nexperiment {\n  name = 'x',\n  epochs = 1,\n  max_steps = 5,\n"
                              "  batch_size = 8,\n\n  workers = \"2\",\n}\n");
  CHECK(load_error(path, catalog) == path + ":8: experiment field 'workers' must be an int >= 1, got string \"2\"");
}

TEST_CASE("a constructor given without its call asks whether the call was meant", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("call.lua", "experiment {\n  name = 'x',\n  compressor = none,\n}\n");
  CHECK_THAT(load_error(path, catalog), StartsWith(path + ":3: experiment field 'compressor' must be a compressor") &&
                                            EndsWith("got the constructor none itself (did you mean none()?)"));
  const auto swept = dir.write("swept.lua", "experiment {\n  name = 'x',\n  compressor = sweep { none(), topk },\n}\n");
  CHECK_THAT(load_error(swept, catalog), Contains("the constructor topk itself (did you mean topk()?)"));
  // A sweep over several lines: the line of the bare name, not the one where the sweep opens.
  const auto lines = dir.write("lines.lua",
                               "experiment {\n  name = 'x',\n  compressor = sweep {\n    none(),  -- topk later\n"
                               "    topk,\n    topk { },\n  },\n}\n");
  CHECK_THAT(load_error(lines, catalog),
             StartsWith(lines + ":5: sweep alternative 2 must be") && Contains("the constructor topk itself"));
}

TEST_CASE("a component field of the wrong type says so with its article", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("article.lua", "local a = allreduce { algorithm = 2 }\n");
  CHECK_THAT(load_error(path, catalog), Contains("allreduce.algorithm must be a string, got int 2"));
  const auto ratio = dir.write("ratio.lua", "local t = topk { ratio = 'x' }\n");
  CHECK_THAT(load_error(ratio, catalog), Contains("topk.ratio must be a number, got string \"x\""));
}

TEST_CASE("a runtime error names the file and line", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("boom.lua", "local x = 1\nlocal y = 2\nerror(\"boom\")\n");
  CHECK(load_error(path, catalog) == path + ":3: boom");
}

TEST_CASE("an error without a position still names the file", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  CHECK(load_error(dir.write("a.lua", "error('plain', 0)\n"), catalog) == dir.path() + "/a.lua: plain");
  CHECK(load_error(dir.write("b.lua", "error({})\n"), catalog) ==
        dir.path() + "/b.lua: (error object is a table value)");
}

TEST_CASE("reading an undefined global is an error, such as a misspelled constructor", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("typo.lua", "experiment {\n  name = 'x',\n  compressor = topK { ratio = 0.1 },\n}\n");
  CHECK(load_error(path, catalog) ==
        path +
            ":3: undefined global 'topK'; did you mean 'topk'? (constructors: churn: calm; compressor: "
            "chain, none, topk; dataset: fashion_mnist; device: cpu; hardware: measured; lr_schedule: constant; model: lenet5, mlp; "
            "network: link; optimizer: sgd; placement: processes, threads; schedule: synchronous; stopping: never; "
            "topology: allreduce)");
}

TEST_CASE("an unknown component field is reported with the known fields", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("field.lua", "local c = none()\nlocal t = topk { rato = 0.1 }\n");
  CHECK(load_error(path, catalog) ==
        path + ":2: unknown field 'rato' in compressor 'topk'; known: ratio, error_feedback");
}

TEST_CASE("an out-of-range value carries the catalog's message at the constructor's line", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("quick.lua", R"(experiment {
  name       = "quickstart",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 64,
  topology   = allreduce { algorithm = "ring" },
  schedule   = synchronous(),
  compressor = sweep { none(), topk { ratio = 1.5 } },
}
)");
  CHECK(load_error(path, catalog) == path + ":9: topk.ratio must be in (0, 1], got 1.5");
}

TEST_CASE("a field value of the wrong kind is refused, naming the type the field takes", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("table.lua", "\nlocal t = topk { ratio = {} }\n");
  CHECK(load_error(path, catalog) == path + ":2: topk.ratio must be a number, got a table");
  const auto component = dir.write("comp.lua", "local t = topk { ratio = none() }\n");
  CHECK(load_error(component, catalog) == component + ":1: topk.ratio must be a number, got compressor none()");
  const auto positional = dir.write("pos.lua", "local t = topk { 0.1 }\n");
  CHECK(load_error(positional, catalog) ==
        positional + ":1: topk takes named fields (topk { field = value }), got a value at position 1");
}

TEST_CASE("a list-of-ints field takes a Lua sequence of integers and names a bad entry", "[lua][errors][list]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto mixed = dir.write("mixed.lua", "\nlocal m = mlp { sizes = {1, \"a\"} }\n");
  CHECK(load_error(mixed, catalog) == mixed + ":2: mlp.sizes must be a list of ints, got string \"a\" at position 2");
  const auto scalar = dir.write("scalar.lua", "local m = mlp { sizes = 3 }\n");
  CHECK(load_error(scalar, catalog) == scalar + ":1: mlp.sizes must be a list of ints, got int 3");
  const auto fractional = dir.write("frac.lua", "local m = mlp { sizes = {784, 2.5} }\n");
  CHECK(load_error(fractional, catalog) ==
        fractional + ":1: mlp.sizes must be a list of ints, got number 2.5 at position 2");
  const auto named = dir.write("named.lua", "local m = mlp { sizes = {784, x = 1} }\n");
  CHECK(load_error(named, catalog) == named + ":1: mlp.sizes takes a list { a, b, ... }, got a field 'x'");
}

TEST_CASE("a component of the wrong kind names the field and the expected kind", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("kind.lua", "\n\nexperiment { name = 'k', model = topk {} }\n");
  CHECK(load_error(path, catalog) ==
        path + ":3: experiment field 'model' must be a model (known: lenet5(), mlp()), got compressor 'topk'");
  const auto swept = dir.write("kind2.lua", "experiment { name = 'k', compressor = sweep { none(), sgd() } }\n");
  CHECK(load_error(swept, catalog) ==
        swept +
            ":1: experiment field 'compressor' (sweep alternative 2) must be a compressor "
            "(known: chain(), none(), topk()), got optimizer 'sgd'");
}

TEST_CASE("a constructor passed without calling it is explained", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("fn.lua", "experiment { name = 'f', compressor = none }\n");
  CHECK(load_error(path, catalog) ==
        path +
            ":1: experiment field 'compressor' must be a compressor (known: chain(), none(), topk()), "
            "got the constructor none itself (did you mean none()?)");
}

TEST_CASE("scalar experiment fields are checked", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  CHECK(load_error(dir.write("b.lua", "experiment { name = 'b', batch_size = 0 }"), catalog) ==
        dir.path() + "/b.lua:1: experiment field 'batch_size' must be an int >= 1, got int 0");
  CHECK(load_error(dir.write("e.lua", "experiment { name = 'e', epochs = 1.5 }"), catalog) ==
        dir.path() + "/e.lua:1: experiment field 'epochs' must be an int >= 1, got number 1.5");
  CHECK(load_error(dir.write("t.lua", "experiment { name = 't', timeout = -1 }"), catalog) ==
        dir.path() + "/t.lua:1: experiment field 'timeout' must be a number > 0, got int -1");
  CHECK(load_error(dir.write("s.lua", "experiment { name = 's', seeds = 3 }"), catalog) ==
        dir.path() +
            "/s.lua:1: experiment field 'seeds' must be a list of integers such as "
            "{ 1, 2, 3 }, got int 3");
  CHECK(load_error(dir.write("d.lua", "experiment { name = 'd', seeds = { 1, 1 } }"), catalog) ==
        dir.path() + "/d.lua:1: experiment field 'seeds' lists seed 1 twice");
}

TEST_CASE("an unknown experiment field suggests the closest and lists the known fields", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("unknown.lua", "\nexperiment {\n  name = 'u',\n  compresor = none(),\n}\n");
  CHECK(
      load_error(path, catalog) ==
      path +
          ":4: unknown experiment field 'compresor'; did you mean 'compressor'? (known: baseline, batch_size, churn, churn_batch, clip_norm, compressor, data, "
          "device, divergence_factor, elastic, epochs, eval_every, eval_limit, exchange, hardware, lr_schedule, max_steps, model, name, "
          "network, "
          "optimizer, placement, repeats, runs_per_seed, schedule, seeds, stopping, timeout, topology, workers)");
  // Other tools call it `dataset`: the field it extends is named.
  const auto dataset = dir.write("dataset.lua", "experiment { name = 'd', dataset = 1 }\n");
  CHECK_THAT(load_error(dataset, catalog), Catch::Contains("unknown experiment field 'dataset'; did you mean 'data'?"));
}

TEST_CASE("the experiment name is required", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("noname.lua", "experiment { epochs = 2 }\n");
  CHECK(load_error(path, catalog) == path + ":1: experiment is missing the required field 'name' (a string)");
}

TEST_CASE("experiment must be called exactly once", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto twice = dir.write("twice.lua", "experiment { name = 'a' }\n\nexperiment { name = 'b' }\n");
  CHECK(load_error(twice, catalog) ==
        twice + ":3: experiment { ... } may be called only once; it was already called at " + twice + ":1");
  const auto never = dir.write("never.lua", "local x = none()\n");
  CHECK(load_error(never, catalog) == never + ": the file never calls experiment { ... }");
}

TEST_CASE("io, os, require and file loading are not available", "[lua][sandbox]") {
  TempDir dir;
  FakeCatalog catalog;
  for (const char* name : {"io", "os", "require", "package", "debug", "dofile", "loadfile", "collectgarbage"}) {
    const auto path = dir.write(std::string(name) + ".lua", std::string("\nlocal f = ") + name + "\n");
    CHECK_THAT(load_error(path, catalog), Catch::StartsWith(path + ":2: undefined global '" + name + "'"));
  }
  const auto path = dir.write("io_open.lua", "io.open('/etc/passwd')\n");
  CHECK_THAT(load_error(path, catalog), Catch::StartsWith(path + ":1: undefined global 'io'"));
  const auto dump = dir.write("dump.lua",
                              "local d = string.dump\nassert(d == nil, 'dump')\n"
                              "experiment { name = 'x' }\n");
  CHECK(load_error(dump, catalog) == "");
}

TEST_CASE("binary chunks are refused, from load and as the file", "[lua][sandbox]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("bin.lua", "local f, err = load('\\27Lua', 'x', 'b')\nassert(f == nil)\nerror(err, 0)\n");
  CHECK(load_error(path, catalog) == path + ": attempt to load a binary chunk (mode is 't')");
  const auto text = dir.write("text.lua", "local f = load('return 7', 'x', 'b')\nexperiment { name = 'n' .. f() }\n");
  CHECK(load_error(text, catalog) == "");
  const auto binary = dir.write("binary.lua", std::string("\x1bLua\x54\x00", 6));
  CHECK(load_error(binary, catalog) == binary + ": attempt to load a binary chunk (mode is 't')");
}

TEST_CASE("an endless loop stops at the instruction budget, pcall or not", "[lua][sandbox]") {
  TempDir dir;
  FakeCatalog catalog;
  LoadOptions options;
  options.instruction_limit = 100'000;
  const auto loop = dir.write("loop.lua", "local n = 0\nwhile true do\n  n = n + 1\nend\n");
  const std::string message = load_error(loop, catalog, options);
  // The hook may stop the loop on either of its lines; it must name one of them.
  CHECK_THAT(message, StartsWith(loop + ":3: ") || StartsWith(loop + ":4: ") || StartsWith(loop + ":2: "));
  CHECK_THAT(message, EndsWith("experiment file exceeded its instruction budget of 100000 "
                               "instructions (infinite loop?)"));
  const auto swallowed = dir.write("pcall.lua", "while true do\n  pcall(function() while true do end end)\nend\n");
  CHECK_THAT(load_error(swallowed, catalog, options),
             StartsWith(swallowed + ":") && Contains("exceeded its instruction budget"));
}

TEST_CASE("a huge allocation stops at the memory cap", "[lua][sandbox]") {
  TempDir dir;
  FakeCatalog catalog;
  LoadOptions options;
  options.memory_limit = 8 << 20;
  const auto huge = dir.write("huge.lua", "local a = 1\nlocal s = string.rep('x', 1 << 30)\n");
  CHECK(load_error(huge, catalog, options) == huge + ":2: experiment file exceeded its memory limit of 8 MiB");
  const auto growing = dir.write("grow.lua", "local t = {}\nfor i = 1, 1e9 do t[i] = i end\n");
  CHECK(load_error(growing, catalog, options) == growing + ":2: experiment file exceeded its memory limit of 8 MiB");
}

TEST_CASE("a missing file is a ConfigError naming the path and the reason", "[lua][errors]") {
  FakeCatalog catalog;
  CHECK(load_error("x.lua", catalog) == "cannot open experiment file 'x.lua': No such file or directory");
}

TEST_CASE("long paths are shown in full, not as Lua shortens them", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write(std::string(40, 'd') + "/" + std::string(40, 'e') + "/boom.lua", "\nerror('boom')\n");
  CHECK(load_error(path, catalog) == path + ":2: boom");
}

TEST_CASE("a #! first line is skipped and lines still count from the top", "[lua]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("shebang.lua", "#!/usr/bin/env laconic run\n\nerror('here')\n");
  CHECK(load_error(path, catalog) == path + ":3: here");
}

TEST_CASE("two kinds defining one constructor name is an invariant error", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  catalog.add({"model", "none", "a model that clashes", {}});
  const auto path = dir.write("clash.lua", "experiment { name = 'c' }\n");
  CHECK_THROWS_AS(laconic::lua::load_experiment(path, catalog), laconic::InvariantError);
  CHECK_THROWS_WITH(laconic::lua::load_experiment(path, catalog), Contains("component name 'none' is defined by both"));
}

TEST_CASE("an unknown field is named as unknown whatever its value, a component included", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("unknown.lua", "local a = allreduce { outer_optimizer = sgd { lr = 0.1 } }\n");
  CHECK_THAT(load_error(path, catalog),
             Contains("unknown field 'outer_optimizer' in topology 'allreduce'; known: algorithm"));
  CHECK_THAT(load_error(path, catalog), !Contains("must be a bool, number or string"));
  const auto near = dir.write("near.lua", "local a = allreduce { algoritm = sgd {} }\n");
  CHECK_THAT(load_error(near, catalog), Contains("(did you mean 'algorithm'?)"));
}

TEST_CASE("a function where a number goes is not told to call a constructor", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path =
      dir.write("fn.lua", "experiment {\n  name = 'x',\n  workers = function() return 2 end,\n}\n");
  const std::string message = load_error(path, catalog);
  CHECK_THAT(message, Contains("experiment field 'workers' must be") && Contains("(this field takes no function)"));
  CHECK_THAT(message, !Contains("call the constructor"));
}

TEST_CASE("a field written with '==' asks whether '=' was meant, without the list of constructors", "[lua][errors]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("eq.lua", "experiment {\n  name = 'x',\n  batch_size == 64,\n}\n");
  const std::string message = load_error(path, catalog);
  CHECK_THAT(message, Contains("undefined global 'batch_size': 'batch_size' is a field") &&
                          Contains("did you mean '=' where '==' stands"));
  CHECK_THAT(message, !Contains("constructors:"));
  CHECK(message.size() < 300);
  // A name that is no field still gets the constructors' list.
  const auto typo = dir.write("typo.lua", "local c = topkk { }\n");
  CHECK_THAT(load_error(typo, catalog), Contains("did you mean 'topk'?") && Contains("constructors:"));
}

TEST_CASE("a pattern that would backtrack past the budget is refused, where the instruction hook cannot reach",
          "[lua][sandbox]") {
  TempDir dir;
  FakeCatalog catalog;
  // 40 repetitions on 40 characters: hours in Lua's C matcher, which no hook interrupts.
  const auto path =
      dir.write("match.lua", "local s = string.rep('a', 40)\nlocal i = string.find(s, string.rep('a*', 40) .. 'b')\n");
  CHECK_THAT(load_error(path, catalog),
             StartsWith(path + ":2: string.find: the pattern") && Contains("could backtrack about 10^"));
  const auto method = dir.write("method.lua", "local s = string.rep('a', 40)\nlocal m = s:match(string.rep('a-', 40))\n");
  CHECK_THAT(load_error(method, catalog), Contains("string.match: the pattern"));
  // Ordinary patterns, and plain finds of any text, still work.
  const auto fine = dir.write("fine.lua",
                              "assert(('lr=0.05'):match('^(%a+)=([%d%.]+)$') == 'lr')\n"
                              "assert(string.find(string.rep('a*', 40), 'a*', 1, true) == 1)\n"
                              "assert(select(2, ('a b  c'):gsub('%s+', ' ')) == 2)\n"
                              "experiment { name = 'x' }\n");
  CHECK_NOTHROW(laconic::lua::load_experiment(fine, catalog));
  CHECK(laconic::lua::pattern_steps_log10("%d+", 10) == Approx(2 * std::log10(11.0)));
  // %% is a literal percent sign, repeated by the *; [*] a set, made optional by the ?.
  CHECK(laconic::lua::pattern_steps_log10("%%*[*]?", 10) == Approx(2 * std::log10(11.0) + std::log10(2.0)));
}

TEST_CASE("recursion through pcall stops at the instruction budget", "[lua][sandbox]") {
  TempDir dir;
  FakeCatalog catalog;
  LoadOptions options;
  options.instruction_limit = 100'000;
  const auto path = dir.write("rec.lua", "local function f() pcall(f) f() end\nf()\n");
  const auto start = std::chrono::steady_clock::now();
  const std::string message = load_error(path, catalog, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(message << " after " << seconds << " s");
  CHECK_THAT(message, Contains("exceeded its instruction budget") || Contains("stack overflow"));
  CHECK(seconds < 30);
}
