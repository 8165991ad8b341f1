// The perldoc corpus (engine/train/data/perldoc.cpp) on Debian's perl-doc, and byte tokens of
// any text file (text { tokens = "bytes" }).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "engine/catalog.hpp"
#include "engine/train/builtin.hpp"
#include "engine/train/models/gpt.hpp"
#include "engine/train/data/perldoc.hpp"
#include "engine/train/data/text.hpp"
#include "engine/train/models/objective.hpp"
#include "cache_dir_setting.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

bool perl_doc_installed() {
  try {
    (void)train::perldoc_folder("");
    return true;
  } catch (const ConfigError&) {
    return false;
  }
}

// Letters, digits, spaces and punctuation of English text: the share of bytes that are.
double printable_share(const std::string& text) {
  std::size_t printable = 0;
  for (const char c : text)
    if (std::isprint(static_cast<unsigned char>(c)) || c == '\n') ++printable;
  return text.empty() ? 0.0 : static_cast<double>(printable) / static_cast<double>(text.size());
}

// The windows' bytes in order, and that each target is its input shifted by one byte.
void check_windows(const train::DataSplit& split, std::int64_t context) {
  REQUIRE(split.inputs.dim() == 2);
  CHECK(split.inputs.size(1) == context);
  CHECK(split.inputs.scalar_type() == torch::kUInt8);
  CHECK(split.labels.scalar_type() == torch::kUInt8);
  CHECK(torch::equal(split.inputs.narrow(1, 1, context - 1), split.labels.narrow(1, 0, context - 1)));
  // Consecutive windows: the last target of one is the first input of the next.
  CHECK(torch::equal(split.labels.narrow(0, 0, split.size() - 1).select(1, context - 1),
                     split.inputs.narrow(0, 1, split.size() - 1).select(1, 0)));
}

}  // namespace

TEST_CASE("perldoc is over 5 MB of English prose from perl-doc, split 90/5/5 by paragraph",
          "[train][perldoc][needs-perldoc]") {
  if (!perl_doc_installed())
    LACONIC_SKIP("Debian's perl-doc is not installed (apt-get install perl-doc): no corpus to check");
  const auto corpus = train::perldoc_corpus(train::perldoc_folder(""));
  const auto& texts = corpus.texts;
  CHECK(corpus.files > 200);
  CHECK(corpus.repeats < corpus.paragraphs / 3);
  const double total = static_cast<double>(texts[0].size() + texts[1].size() + texts[2].size());
  INFO("training " << texts[0].size() << ", validation " << texts[1].size() << ", test " << texts[2].size());
  CHECK(total >= 5e6);
  CHECK(texts[1].size() / total == Approx(0.05).margin(0.01));
  CHECK(texts[2].size() / total == Approx(0.05).margin(0.01));
  for (const auto& text : texts) CHECK(printable_share(text) > 0.99);
  // No paragraph of the validation or test split is in the training split (repeated paragraphs,
  // headings such as "DESCRIPTION", are kept once).
  std::set<std::string> training;
  for (std::size_t at = 0, end; (end = texts[0].find('\n', at)) != std::string::npos; at = end + 1)
    training.insert(texts[0].substr(at, end - at));
  for (const std::string* held_out : {&texts[1], &texts[2]}) {
    std::size_t lines = 0, seen = 0;
    for (std::size_t at = 0, end; (end = held_out->find('\n', at)) != std::string::npos; at = end + 1, ++lines)
      if (training.count(held_out->substr(at, end - at)) > 0) ++seen;
    CHECK(lines > 1000);
    CHECK(seen == 0);
  }
}

TEST_CASE("perldoc's splits are windows of context bytes, the same at any context, kept in the disk cache",
          "[train][perldoc][needs-perldoc]") {
  if (!perl_doc_installed())
    LACONIC_SKIP("Debian's perl-doc is not installed (apt-get install perl-doc): no corpus to check");
  testing::TempDir cache;
  const testing::CacheDirSetting setting(cache.path);
  train::PerldocOptions o;
  o.context = 64;
  train::PerldocDataset first(o);
  check_windows(first.train(), 64);
  check_windows(first.evaluation(), 64);
  check_windows(first.test(), 64);
  CHECK(first.classes() == 256);
  CHECK(first.evaluation_split() == "validation");
  CHECK(first.bytes_per_token() == 1.0);
  CHECK(first.train().size() > 15 * first.evaluation().size());  // 90/5/5 by paragraphs: about 18x
  CHECK_FALSE(std::filesystem::is_empty(cache.path));
  // Another context cuts the same bytes (the cache's uint8 round trip: decoded_cache_test.cpp).
  o.context = 32;
  train::PerldocDataset other(o);
  check_windows(other.evaluation(), 32);
  CHECK(torch::equal(other.evaluation().inputs.reshape({-1}).narrow(0, 0, 64 * 100),
                     first.evaluation().inputs.reshape({-1}).narrow(0, 0, 64 * 100)));
}

TEST_CASE("perldoc with a folder of no .pod files says which package to install", "[train][perldoc]") {
  testing::TempDir empty;
  const auto datasets = train::builtin_datasets();
  REQUIRE_THROWS_WITH(datasets.create({"dataset", "perldoc", {{"root", empty.path}}}),
                      Catch::Contains("no .pod files in '" + empty.path + "'") &&
                          Catch::Contains("apt-get install perl-doc"));
}

TEST_CASE("text with byte tokens gives windows of bytes, vocabulary 256, one byte per token", "[train][text]") {
  testing::TempDir dir;
  std::string corpus;
  for (int line = 0; line < 200; ++line) corpus += "the quick brown fox jumps over the lazy dog " + std::to_string(line) + "\n";
  const std::string file = dir.write("corpus.txt", corpus);
  train::TextOptions o;
  o.file = file;
  o.tokens = train::TextTokens::Bytes;
  o.bptt = 16;
  train::TextDataset text(o);
  CHECK(text.classes() == 256);
  CHECK(text.bytes_per_token() == 1.0);
  check_windows(text.train(), 16);
  // The training split is the first 80% of the lines, byte for byte.
  const std::string first = corpus.substr(0, 16);
  const auto row = text.train().inputs[0];
  CHECK(std::string(reinterpret_cast<const char*>(row.data_ptr<std::uint8_t>()), 16) == first);
  const auto datasets = train::builtin_datasets();
  REQUIRE_THROWS_WITH(
      datasets.create({"dataset", "text", {{"file", file}, {"tokens", std::string("bytes")}, {"vocab", std::int64_t{1000}}}}),
      Catch::Contains("text.vocab = 1000 with tokens = \"bytes\""));
}

TEST_CASE("a gpt whose context differs from the dataset's is refused, naming both fields", "[train][gpt]") {
  testing::TempDir dir;
  const std::string file = dir.write("corpus.txt", std::string(4000, 'a'));
  const auto dataset = train::builtin_datasets().create(
      {"dataset", "text", {{"file", file}, {"tokens", std::string("bytes")}, {"bptt", std::int64_t{64}}}});
  const auto model = train::builtin_models().create({"model", "gpt", {{"context", std::int64_t{32}}}});
  REQUIRE_THROWS_WITH(train::check_compatible(*model, *dataset),
                      "gpt.context = 32 but text.bptt = 64: set the same number of tokens per example on both");
}

TEST_CASE("a gpt on perldoc resolves to validation perplexity and records its parameter count",
          "[train][perldoc][needs-perldoc]") {
  if (!perl_doc_installed())
    LACONIC_SKIP("Debian's perl-doc is not installed (apt-get install perl-doc): no corpus to resolve");
  const engine::EngineCatalog catalog;
  RunConfig run;
  run.dataset = catalog.resolve({"dataset", "perldoc", {}});
  run.model = catalog.resolve({"model", "gpt", {}});
  run.optimizer = catalog.resolve({"optimizer", "adamw", {}});
  const ResolvedRun resolved = catalog.resolve_run(run);
  CHECK(resolved.test_metric == ResolvedMetric{"test_perplexity", false, "validation"});
  CHECK(resolved.model_parameters == train::gpt_parameters(train::GptOptions{}));
}

TEST_CASE("a word token stands for its split's bytes over its tokens, and bits per byte follow from them",
          "[train][text]") {
  testing::TempDir dir;
  std::string corpus;
  for (int line = 0; line < 100; ++line) corpus += "aa bbb\n";  // 7 bytes, 3 tokens (2 words and <eos>)
  train::TextOptions o;
  o.file = dir.write("words.txt", corpus);
  o.bptt = 4;
  train::TextDataset text(o);
  CHECK(text.bytes_per_token() == Approx(7.0 / 3.0));
  CHECK(train::bits_per_byte(std::log(2.0) * 7.0, 7.0 / 3.0) == Approx(3.0));  // 7 bits a token, 7/3 bytes each
  CHECK(train::bits_per_byte(std::log(256.0), 1.0) == Approx(8.0));           // a uniform guess over bytes
}
