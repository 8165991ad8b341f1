// MNIST, CIFAR-10, synthetic and text datasets on files and corpora the tests write themselves.
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "engine/catalog.hpp"
#include "engine/core/error.hpp"
#include "engine/train/builtin.hpp"
#include "engine/train/data/cifar10.hpp"
#include "engine/train/models/objective.hpp"
#include "engine/train/data/synthetic.hpp"
#include "engine/train/data/text.hpp"
#include "engine/train/worker.hpp"
#include "rank_threads.hpp"
#include "temp_dir.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;
using laconic::testing::TempDir;

namespace {

/// A CIFAR-10 batch of `n` records: label i % 10, every pixel of channel c equal to
/// (i + 40 * c) % 256.
std::string cifar_batch(std::int64_t n, std::int64_t first) {
  std::string bytes;
  for (std::int64_t i = first; i < first + n; ++i) {
    bytes.push_back(static_cast<char>(i % 10));
    for (int c = 0; c < 3; ++c) bytes.append(1024, static_cast<char>((i + 40 * c) % 256));
  }
  return bytes;
}

train::TextOptions text_options(const std::string& file, std::int64_t vocab, std::int64_t bptt) {
  train::TextOptions o;
  o.file = file;
  o.vocab = vocab;
  o.bptt = bptt;
  return o;
}

}  // namespace

TEST_CASE("a missing MNIST names the path and where to get the files", "[train][dataset]") {
  auto r = train::builtin_datasets();
  REQUIRE_THROWS_WITH(r.create({"dataset", "mnist", {{"root", std::string("/nonexistent/mnist")}}}),
                      Catch::Contains("MNIST file 'train-images-idx3-ubyte' not found in '/nonexistent/mnist'") &&
                          Catch::Contains("yann.lecun.com/exdb/mnist") && Catch::Contains("mnist { root = ... }"));
}

TEST_CASE("the CIFAR-10 reader reads binary batches, labels and standardized channels", "[train][dataset][cifar10]") {
  TempDir dir;
  auto r = train::builtin_datasets();
  const auto spec = ComponentSpec{"dataset", "cifar10", {{"root", dir.path}}};
  REQUIRE_THROWS_WITH(r.create(spec), Catch::Contains("CIFAR-10 file 'data_batch_1.bin' not "
                                                      "found in '" +
                                                      dir.path + "'") &&
                                          Catch::Contains("cifar-10-batches-bin"));
  for (int b = 1; b <= 5; ++b) dir.write("data_batch_" + std::to_string(b) + ".bin", cifar_batch(3, 3 * (b - 1)));
  dir.write("test_batch.bin", cifar_batch(4, 100));
  auto data = r.create(spec);
  const auto& train_split = data->train();
  REQUIRE(train_split.inputs.sizes() == torch::IntArrayRef({15, 3, 32, 32}));
  REQUIRE(data->test().inputs.sizes() == torch::IntArrayRef({4, 3, 32, 32}));
  CHECK(train_split.labels[7].item<std::int64_t>() == 7);
  CHECK(data->test().labels[0].item<std::int64_t>() == 0);  // record 100
  // Record 7, green channel: (7 + 40) / 255 standardized with 0.4822 and 0.2435.
  CHECK(train_split.inputs[7][1][31][0].item<double>() == Approx((47.0 / 255.0 - 0.4822) / 0.2435).epsilon(1e-5));
  CHECK(train_split.inputs[7][2][0][5].item<double>() == Approx((87.0 / 255.0 - 0.4465) / 0.2616).epsilon(1e-5));

  dir.write("test_batch.bin", cifar_batch(4, 0) + "x");
  REQUIRE_THROWS_WITH(r.create(spec)->test(),
                      Catch::Contains("expected a multiple of 3073 bytes") && Catch::Contains("got 12293"));
}

TEST_CASE("synthetic data is deterministic for a seed, balanced and learnable", "[train][dataset][synthetic]") {
  auto options = [](std::int64_t seed) {
    train::SyntheticOptions o;
    o.shape = {3, 8, 8};
    o.classes = 4;
    o.n = 400;
    o.test_n = 100;
    o.seed = seed;
    return o;
  };
  // Splits are cached per process (a and b share theirs), so determinism is checked against
  // the definition: class means from generator seed * 3, each split's noise from seed * 3 + 1
  // (train) or + 2 (test).
  auto reference = [](std::uint64_t seed, std::int64_t n, std::uint64_t stream) {
    auto means = torch::randn({4, 3, 8, 8}, at::detail::createCPUGenerator(seed * 3));
    auto labels = torch::arange(n, torch::kInt64).remainder(4);
    auto noise = torch::randn({n, 3, 8, 8}, at::detail::createCPUGenerator(seed * 3 + stream));
    return means.index_select(0, labels).add_(noise).div_(std::sqrt(2.0));
  };
  train::SyntheticDataset a(options(1)), b(options(1)), c(options(2));
  REQUIRE(a.train().inputs.sizes() == torch::IntArrayRef({400, 3, 8, 8}));
  REQUIRE(a.test().inputs.sizes() == torch::IntArrayRef({100, 3, 8, 8}));
  CHECK(torch::equal(a.train().inputs, reference(1, 400, 1)));
  CHECK(torch::equal(a.test().inputs, reference(1, 100, 2)));
  CHECK(torch::equal(c.train().inputs, reference(2, 400, 1)));
  CHECK(torch::equal(a.train().inputs, b.train().inputs));
  CHECK_FALSE(torch::equal(a.train().inputs, c.train().inputs));
  CHECK_FALSE(torch::equal(a.train().inputs.narrow(0, 0, 100), a.test().inputs));
  CHECK(torch::bincount(a.train().labels).eq(100).all().item<bool>());
  CHECK(a.train().inputs.std().item<double>() == Approx(1.0).margin(0.1));

  // Nearest class mean, estimated on train, classifies test well above chance (1/4).
  auto means = torch::zeros({4, 192});
  auto flat = a.train().inputs.reshape({400, -1});
  means.index_add_(0, a.train().labels, flat).div_(100);
  auto distances = torch::cdist(a.test().inputs.reshape({100, -1}), means);
  const double accuracy = distances.argmin(1).eq(a.test().labels).to(torch::kFloat).mean().item<double>();
  CHECK(accuracy > 0.9);
}

TEST_CASE("synthetic options name the bad value", "[train][dataset][synthetic]") {
  auto r = train::builtin_datasets();
  CHECK_THROWS_WITH(r.create({"dataset", "synthetic", {{"shape", std::vector<std::int64_t>{3, 0, 32}}}}),
                    "synthetic.shape dimensions must be >= 1, got {3, 0, 32}");
  CHECK_THROWS_WITH(r.create({"dataset", "synthetic", {{"classes", std::int64_t{1}}}}),
                    "synthetic.classes must be >= 2, got 1");
}

TEST_CASE("text caps the vocabulary, maps the rest to <unk>, ends lines with <eos>", "[train][dataset][text]") {
  TempDir dir;
  // 10 lines: 8 train, 1 valid, 1 test. In train, "a" x8, "b" x4, "c" x2, "d" x2, "e" x1.
  std::string corpus;
  for (int i = 0; i < 8; ++i) {
    corpus += "a";
    if (i % 2 == 0) corpus += " b";
    if (i % 4 == 0) corpus += " c d";
    if (i == 7) corpus += " e <unk>";
    corpus += "\n";
  }
  corpus += "a z b\n";      // valid
  corpus += "e a c d b\n";  // test
  const auto file = dir.write("corpus.txt", corpus);
  train::TextDataset data(text_options(file, 5, 3));
  // <unk>, <eos>, then a (8), b (4), and of c and d (2 each) the first in byte order.
  CHECK(data.words() == std::vector<std::string>{"<unk>", "<eos>", "a", "b", "c"});
  CHECK(data.classes() == 5);
  CHECK(data.sequence_length() == 3);

  // Test line "e a c d b <eos>" = 0 2 4 0 3 1: one window of 3 with a shifted target.
  const auto& test = data.test();
  REQUIRE(test.inputs.sizes() == torch::IntArrayRef({1, 3}));
  CHECK(torch::equal(test.inputs, torch::tensor({{0, 2, 4}}, torch::kInt64)));
  CHECK(torch::equal(test.labels, torch::tensor({{2, 4, 0}}, torch::kInt64)));
  // Valid "a z b <eos>" = 2 0 3 1: one window.
  CHECK(torch::equal(data.valid().inputs, torch::tensor({{2, 0, 3}}, torch::kInt64)));
  CHECK(torch::equal(data.valid().labels, torch::tensor({{0, 3, 1}}, torch::kInt64)));

  // Train: 8 lines, 8 + 4 + 2*2 + 2 + 1 (<unk>) words and 8 <eos> = 27 tokens -> 26 / 3 = 8
  // windows; targets are the inputs shifted by one, windows do not overlap.
  const auto& train_split = data.train();
  REQUIRE(train_split.inputs.sizes() == torch::IntArrayRef({8, 3}));
  auto inputs = train_split.inputs.reshape({-1});
  auto targets = train_split.labels.reshape({-1});
  CHECK(torch::equal(inputs.narrow(0, 1, 23), targets.narrow(0, 0, 23)));
  // "a b c d <eos> a <eos> a b <eos>": the first line's words, then <eos>.
  CHECK(torch::equal(inputs.narrow(0, 0, 7), torch::tensor({2, 3, 4, 0, 1, 2, 1}, torch::kInt64)));
  CHECK(train_split.inputs.max().item<std::int64_t>() < 5);
}

TEST_CASE("text reads a .train/.valid/.test triple and refuses a missing corpus", "[train][dataset][text]") {
  TempDir dir;
  dir.write("ptb.train.txt", "the cat sat\nthe dog sat\n");
  dir.write("ptb.valid.txt", "the cat\n");
  dir.write("ptb.test.txt", "a dog sat\n");
  train::TextDataset data(text_options(dir.path + "/ptb", 100, 2));
  CHECK(data.words() == std::vector<std::string>{"<unk>", "<eos>", "sat", "the", "cat", "dog"});
  CHECK(torch::equal(data.test().inputs, torch::tensor({{0, 5}}, torch::kInt64)));
  CHECK(data.train().size() == 3);  // 8 tokens -> (8 - 1) / 2 windows

  auto r = train::builtin_datasets();
  CHECK_THROWS_WITH(
      r.create({"dataset", "text", {{"file", dir.path + "/wiki"}}}),
      Catch::Contains("text.file: neither '" + dir.path + "/wiki' nor '" + dir.path + "/wiki.train.txt' exists"));
  CHECK_THROWS_WITH(r.create({"dataset", "text", {}}), Catch::Contains("text.file must name a corpus"));
  CHECK_THROWS_WITH(r.create({"dataset", "text", {{"file", dir.path + "/ptb"}, {"vocab", std::int64_t{2}}}}),
                    "text.vocab must be >= 3 (<unk>, <eos> and a word), got 2");
}

TEST_CASE("the language model's bptt and vocab must match the text dataset's", "[train][dataset][text]") {
  TempDir dir;
  const auto file = dir.write("c.txt", "a b c\n");
  auto text = train::builtin_datasets().create({"dataset", "text", {{"file", file}}});
  auto models = train::builtin_models();
  CHECK_NOTHROW(train::check_compatible(*models.create({"model", "lstm_lm", {}}), *text));
  CHECK_THROWS_WITH(train::check_compatible(*models.create({"model", "lstm_lm", {{"bptt", std::int64_t{20}}}}), *text),
                    "lstm_lm.bptt = 20 but text.bptt = 35: set the same number of tokens per example on both");
  CHECK_THROWS_WITH(
      train::check_compatible(*models.create({"model", "lstm_lm", {{"vocab", std::int64_t{500}}}}), *text),
      "model lstm_lm has 500 outputs but dataset text has 10000 tokens in its vocabulary: set "
      "lstm_lm.vocab = 10000");
  CHECK_THROWS_WITH(train::check_compatible(*models.create({"model", "mlp", {}}), *text),
                    Catch::StartsWith("model mlp classifies whole examples, but dataset text "
                                      "holds token sequences"));
}

TEST_CASE("a worker trains the language model on text and records test perplexity", "[train][worker][text]") {
  TempDir dir;
  // A corpus with structure to learn: each line counts up from a random start.
  std::string corpus;
  for (int line = 0; line < 200; ++line) {
    for (int w = 0; w < 8; ++w) corpus += "w" + std::to_string((line * 7 + w) % 30) + " ";
    corpus += "\n";
  }
  engine::EngineCatalog catalog;
  RunConfig c;
  c.experiment = "test";
  c.name = "lm";
  c.dataset = catalog.resolve(
      {"dataset",
       "text",
       {{"file", dir.write("count.txt", corpus)}, {"vocab", std::int64_t{40}}, {"bptt", std::int64_t{10}}}});
  c.model = catalog.resolve({"model",
                             "lstm_lm",
                             {{"vocab", std::int64_t{40}},
                              {"embed", std::int64_t{16}},
                              {"hidden", std::int64_t{16}},
                              {"bptt", std::int64_t{10}}}});
  // LSTMs sit on a plateau near the uniform guess for a while; a large rate with momentum
  // leaves it within 4 short epochs (lr 0.5 stays near 29 here; lr 20 with momentum diverges).
  c.optimizer = catalog.resolve({"optimizer", "sgd", {{"lr", 5.0}, {"momentum", 0.9}}});
  c.topology = catalog.resolve({"topology", "allreduce", {}});
  c.schedule = catalog.resolve({"schedule", "synchronous", {}});
  c.compressor = catalog.resolve({"compressor", "none", {}});
  c.batch_size = 8;
  c.epochs = 4;
  c.workers = 1;
  std::vector<MetricRecord> records;
  testing::run_ranks(1, std::chrono::seconds(60), [&](comm::Communicator& comm) {
    MemorySink sink;
    train::run_worker(c, catalog.build(c, comm.rank()), comm, sink);
    records = sink.records();
  });
  std::vector<double> perplexity, loss;
  for (const auto& m : records) {
    if (m.key == "test_perplexity") perplexity.push_back(m.value);
    if (m.key == "test_loss") loss.push_back(m.value);
  }
  REQUIRE(perplexity.size() == 4);
  REQUIRE(loss.size() == 4);
  CHECK(perplexity[3] == Approx(std::exp(loss[3])).epsilon(1e-9));
  CHECK(perplexity[3] < perplexity[0]);
  // A uniform guess over the 32 ids has perplexity 32; the next word is nearly always known.
  CHECK(perplexity[3] < 16);
}
