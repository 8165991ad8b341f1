// docs/schema.md's "Metric keys" lists exactly the keys of engine/core/metric_keys.hpp, each with
// the unit the header gives it: the tables are the documentation, the header the one spelling.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "engine/core/metric_keys.hpp"

namespace {

// key -> unit of every "| `key` | unit |" row of the section.
std::map<std::string, std::string> documented_keys() {
  std::ifstream in(std::string(LACONIC_SOURCE_DIR) + "/docs/schema.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto begin = doc.find("## Metric keys");
  const auto end = doc.find("\n## ", begin + 1);
  REQUIRE(begin != std::string::npos);
  const std::string section = doc.substr(begin, end - begin);
  std::map<std::string, std::string> out;
  const std::regex row(R"(\n\| `([a-z_]+)` \| ([^|]+?) \|)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), row); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = (*it)[2];
  return out;
}

}  // namespace

TEST_CASE("docs/schema.md lists every metric key of the header, with its unit, and no other", "[core][keys]") {
  const auto documented = documented_keys();
  std::set<std::string> names;
  for (const auto& key : laconic::keys::all_keys()) {
    INFO(key.name);
    CHECK(names.insert(key.name).second);  // each once
    REQUIRE(documented.count(key.name) == 1);
    CHECK(documented.at(key.name) == key.unit);
  }
  for (const auto& [name, unit] : documented) {
    INFO(name << " is documented but not in engine/core/metric_keys.hpp");
    CHECK(names.count(name) == 1);
  }
  CHECK(names.size() == 43);
}

TEST_CASE("byte keys are the ones that count bytes", "[core][keys]") {
  using namespace laconic::keys;
  for (const char* key : {kBytesSent, kBytesReceived, kBytesDense, kPayloadBytes, kLinkBytes}) CHECK(is_byte_key(key));
  for (const char* key : {kMessages, kTimeStep, kTestAccuracy, kModelParameters}) CHECK_FALSE(is_byte_key(key));
}

TEST_CASE("a metric's direction is decided in one place, for early stopping, best and the reports alike",
          "[core][keys]") {
  using laconic::Goal;
  CHECK(laconic::keys::goal_of(laconic::keys::kTestAccuracy) == Goal::Max);
  for (const char* lower : {laconic::keys::kTestPerplexity, laconic::keys::kTestLoss, laconic::keys::kTrainLoss,
                            laconic::keys::kEpochTime, laconic::keys::kBytesSent, laconic::keys::kConsensusDistance,
                            laconic::keys::kStaleness})
    CHECK(laconic::keys::goal_of(lower) == Goal::Min);
}
