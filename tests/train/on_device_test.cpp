// The flat gradient on the model's device and the host memory the exchange works on
// (engine/train/on_device.hpp): the same memory on the CPU, a buffer of its own when staged. The
// GPU case runs only where this LibTorch has CUDA and sees a GPU; elsewhere it says it was skipped.
#include <catch2/catch.hpp>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "engine/train/device.hpp"
#include "engine/train/on_device.hpp"
#include "engine/train/optim/optimizer_state.hpp"

using namespace laconic;

namespace {

// A small net's gradient, computed on `device`; returns its parameters.
std::vector<torch::Tensor> backward_on(torch::nn::Linear& net, const std::string& device, train::StagedGradient& g,
                                       bool staged) {
  auto params = train::parameters_on(*net, device);
  g = train::StagedGradient(params, staged);
  const auto x = torch::arange(12, torch::kFloat).reshape({3, 4}).to(torch::Device(device));
  net->forward(x).pow(2).sum().backward();
  return params;
}

// Every element of `host` against the flat gradient.
bool host_equals(train::StagedGradient& g) {
  const auto host = g.host();
  const auto flat = train::host_copy(g.on_device());
  return torch::equal(flat, torch::from_blob(host.data(), {static_cast<std::int64_t>(host.size())}, torch::kFloat));
}

// The round trip of a staged gradient: host() apart from the device's memory, filled by to_host(),
// written back by to_device() into the parameters' gradients.
void check_round_trip(const std::string& device) {
  torch::manual_seed(1);
  torch::nn::Linear net(4, 2);
  train::StagedGradient g;
  auto params = backward_on(net, device, g, true);
  REQUIRE(g.staged());
  CHECK(g.on_device().device() == torch::Device(device));
  CHECK(static_cast<void*>(g.host().data()) != g.on_device().data_ptr());
  CHECK_FALSE(host_equals(g));  // nothing copied yet: the host buffer is zeros
  g.to_host();
  CHECK(host_equals(g));
  for (float& x : g.host()) x = 2 * x + 1;
  g.to_device();
  CHECK(host_equals(g));
  // The parameters' gradients are views of what came back.
  CHECK(torch::equal(train::host_copy(params[0].grad()).flatten(),
                     train::host_copy(g.on_device()).narrow(0, 0, params[0].numel())));
}

}  // namespace

TEST_CASE("an unstaged gradient on the CPU is the memory the exchange works on", "[train][device]") {
  torch::manual_seed(1);
  torch::nn::Linear net(4, 2);
  train::StagedGradient g;
  auto params = backward_on(net, "cpu", g, false);
  CHECK_FALSE(g.staged());
  CHECK(static_cast<void*>(g.host().data()) == g.on_device().data_ptr());
  CHECK(params[0].grad().data_ptr() == g.on_device().data_ptr());
  CHECK(g.host().size() == 10);  // 4 x 2 weights, 2 biases
  CHECK(g.host()[0] != 0.0f);    // backward wrote there
  g.host()[0] = 42;
  CHECK(params[0].grad().flatten()[0].item<float>() == 42.0f);
}

TEST_CASE("a staged gradient on the CPU round-trips through its host buffer", "[train][device]") {
  check_round_trip("cpu");
}

TEST_CASE("a staged gradient on a GPU round-trips through pinned host memory", "[train][device][gpu]") {
  if (!torch::cuda::is_available()) {
    WARN("skipped: this LibTorch has no CUDA or sees no GPU; the GPU case did not run");
    return;
  }
  check_round_trip("cuda:0");
}

TEST_CASE("devices: cpu { staged } stages; auto() and cuda() follow what this LibTorch has", "[train][device]") {
  const auto devices = train::builtin_devices();
  CHECK_FALSE(devices.create({"device", "cpu", {}})->staged());
  CHECK(devices.create({"device", "cpu", {{"staged", true}}})->staged());
  if (torch::cuda::is_available()) {
    CHECK(devices.create({"device", "auto", {}})->where() == "cuda:0");
    CHECK(devices.create({"device", "cuda", {}})->staged());
    CHECK_THROWS_WITH(devices.create({"device", "cuda", {{"index", std::int64_t{64}}}})->where(),
                      Catch::Contains("cuda.index = 64"));
  } else {
    CHECK(devices.create({"device", "auto", {}})->where() == "cpu");
    CHECK_FALSE(devices.create({"device", "auto", {}})->staged());
    CHECK_THROWS_WITH(devices.create({"device", "cuda", {}})->where(),
                      Catch::Contains("needs a LibTorch built with CUDA that sees a GPU"));
  }
}

TEST_CASE("an optimizer's state follows its parameters' device", "[train][device]") {
  std::vector<torch::Tensor> params = {torch::ones({3})}, state = {torch::zeros({3})};
  train::follow_device(state, params);
  CHECK(state[0].device() == torch::Device(torch::kCPU));
  if (!torch::cuda::is_available()) {
    WARN("skipped: no GPU, so no state moved between devices");
    return;
  }
  params[0] = params[0].to(torch::kCUDA);
  train::follow_device(state, params);
  CHECK(state[0].device().is_cuda());
}
