// gpt (engine/train/models/gpt.cpp): its parameter count, causality, and the same logits and
// AdamW losses as its PyTorch twin (scripts/laconic_models.py's Gpt, run by gpt_twin_check.py on
// what this test writes: the weights, a batch, laconic's logits and its losses).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "engine/train/builtin.hpp"
#include "engine/train/models/gpt.hpp"
#include "engine/train/models/objective.hpp"
#include "engine/train/optim/adam.hpp"
#include "engine/train/optim/lr_schedule.hpp"
#include "engine/train/step_helpers.hpp"
#include "python.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

train::GptOptions small_gpt() {
  train::GptOptions o;
  o.layers = 2;
  o.heads = 2;
  o.embed = 16;
  o.context = 8;
  o.vocab = 256;
  return o;
}

std::int64_t numel(train::Model& model) {
  std::int64_t total = 0;
  for (const auto& p : model.parameters()) total += p.numel();
  return total;
}

// A tensor written raw beside the manifest, and its entry there.
nlohmann::json write_tensor(const std::string& dir, const std::string& file, const torch::Tensor& t) {
  const auto c = t.detach().contiguous();
  std::ofstream out(dir + "/" + file, std::ios::binary);
  out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.nbytes()));
  return {{"file", file}, {"dtype", c.scalar_type() == torch::kInt64 ? "int64" : "float32"}, {"shape", c.sizes().vec()}};
}

struct Training {
  double lr = 3e-3, final = 0.1, clip_norm = 0.5, weight_decay = 0.1;
  std::int64_t steps = 10, warmup_steps = 3;
};

// laconic's steps on one batch: its loss, its flat gradient, clipping, warm-up and cosine, AdamW.
nlohmann::json train_steps(train::Gpt& model, const torch::Tensor& tokens, const torch::Tensor& targets,
                           const Training& t) {
  auto params = model.parameters();
  auto flat = train::attach_flat_gradient(params);
  train::AdamWOptions adamw;
  adamw.lr = t.lr;
  adamw.weight_decay = t.weight_decay;
  train::AdamW optimizer(adamw);
  const train::CosineLr cosine(train::CosineLrOptions{t.final});
  const ComponentSpec spec{"lr_schedule", "cosine", {{"warmup_steps", t.warmup_steps}}};
  nlohmann::json losses = nlohmann::json::array(), lrs = nlohmann::json::array();
  for (std::int64_t step = 0; step < t.steps; ++step) {
    optimizer.set_lr_factor(train::lr_factor(cosine, spec, {step, 0, t.steps, 1, 1}));
    flat.zero_();
    auto loss = train::training_loss(model.forward(tokens), targets);
    loss.backward();
    train::clip_to_norm(flat, t.clip_norm);
    optimizer.step(params);
    losses.push_back(loss.item<double>());
    lrs.push_back(optimizer.lr());
  }
  return {{"lr", t.lr},       {"betas", {adamw.beta1, adamw.beta2}}, {"eps", adamw.eps}, {"weight_decay", t.weight_decay},
          {"final", t.final}, {"warmup_steps", t.warmup_steps},     {"steps", t.steps}, {"clip_norm", t.clip_norm},
          {"losses", losses}, {"lrs", lrs}};
}



}  // namespace

TEST_CASE("gpt has the parameters gpt_parameters counts, tied or not, with or without biases", "[train][gpt]") {
  for (const bool tied : {true, false})
    for (const bool bias : {true, false}) {
      train::GptOptions o = small_gpt();
      o.tied = tied;
      o.bias = bias;
      train::Gpt model(o);
      INFO("tied " << tied << ", bias " << bias);
      CHECK(numel(model) == train::gpt_parameters(o));
    }
  train::Gpt defaults{train::GptOptions{}};
  CHECK(numel(defaults) == train::gpt_parameters(train::GptOptions{}));
  // The size: a default that trains in minutes here, about 1-3M parameters.
  CHECK(train::gpt_parameters(train::GptOptions{}) >= 1'000'000);
  CHECK(train::gpt_parameters(train::GptOptions{}) <= 3'000'000);
}

TEST_CASE("gpt is causal: changing token t changes no logit before t", "[train][gpt]") {
  torch::manual_seed(3);
  train::Gpt model(small_gpt());
  model.eval();
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randint(0, 256, {2, 8}, torch::kInt64);
  const auto before = model.forward(tokens);
  for (std::int64_t t = 0; t < 8; ++t) {
    auto changed = tokens.clone();
    changed.index_put_({torch::indexing::Slice(), t}, (tokens.index({torch::indexing::Slice(), t}) + 1) % 256);
    const auto after = model.forward(changed);
    INFO("token " << t);
    if (t > 0) CHECK(torch::equal(after.narrow(1, 0, t), before.narrow(1, 0, t)));
    CHECK_FALSE(torch::equal(after.narrow(1, t, 1), before.narrow(1, t, 1)));
  }
}

TEST_CASE("gpt refuses heads that do not divide embed, naming both", "[train][gpt]") {
  const auto models = train::builtin_models();
  REQUIRE_THROWS_WITH(models.create({"model", "gpt", {{"embed", std::int64_t{30}}, {"heads", std::int64_t{4}}}}),
                      Catch::Contains("gpt.heads = 4 must divide gpt.embed = 30"));
}

TEST_CASE("gpt gives its PyTorch twin's logits within 1e-5 and AdamW losses within 1e-4",
          "[train][gpt][python][needs-pytorch]") {
  if (!testing::python_has_torch())
    LACONIC_SKIP("/usr/bin/python3 cannot import torch (Debian's python3-torch); the twin was not run");
  for (const bool tied : {true, false}) {
    torch::manual_seed(11);
    train::GptOptions o = small_gpt();
    o.tied = tied;
    train::Gpt model(o);
    const auto tokens = torch::randint(0, 256, {4, 8}, torch::kInt64);
    const auto targets = torch::randint(0, 256, {4, 8}, torch::kInt64);
    testing::TempDir dir;
    nlohmann::json manifest;
    manifest["options"] = {{"layers", o.layers}, {"heads", o.heads}, {"embed", o.embed}, {"context", o.context},
                           {"vocab", o.vocab},   {"tied", o.tied},   {"bias", o.bias}};
    std::size_t i = 0;
    for (const auto& item : model.named_parameters()) {
      auto entry = write_tensor(dir.path, "p" + std::to_string(i++) + ".bin", item.value());
      entry["name"] = item.key();
      manifest["parameters"].push_back(entry);
    }
    manifest["tokens"] = write_tensor(dir.path, "tokens.bin", tokens);
    manifest["targets"] = write_tensor(dir.path, "targets.bin", targets);
    {
      torch::NoGradGuard no_grad;
      manifest["logits"] = write_tensor(dir.path, "logits.bin", model.forward(tokens));
    }
    manifest["training"] = train_steps(model, tokens, targets, Training{});
    dir.write("manifest.json", manifest.dump());
    const std::string command = std::string("/usr/bin/python3 '") + LACONIC_SOURCE_DIR +
                                "/tests/train/gpt_twin_check.py' '" + dir.path + "' 2>&1";
    const std::string out = testing::output_of(command);
    INFO("tied " << tied << ": " << command << "\n" << out);
    const auto result = nlohmann::json::parse(out);
    CHECK(result["logits_max_difference"].get<double>() <= 1e-5);
    CHECK(result["loss_max_difference"].get<double>() <= 1e-4);
    CHECK(result["lr_max_difference"].get<double>() <= 1e-12);
    // The steps learned: the twin's check is not of ten equal losses.
    CHECK(result["laconic_losses"].back().get<double>() < result["laconic_losses"].front().get<double>() - 0.1);
  }
}
