#include <catch2/catch.hpp>

#include "engine/core/suggest.hpp"
#include "engine/core/metric_keys.hpp"

using laconic::closest_name;
using laconic::name_distance;

TEST_CASE("name distance counts edits, ignoring case", "[core][suggest]") {
  CHECK(name_distance("topk", "topK") == 0);
  CHECK(name_distance("topk", "top") == 1);
  CHECK(name_distance("qsgd", "sgd") == 1);
  CHECK(name_distance("kitten", "sitting") == 3);
  CHECK(name_distance("", "abc") == 3);
}

TEST_CASE("the closest name is a completed prefix first, then the nearest by edits", "[core][suggest]") {
  const std::vector<std::string> keys{"test_accuracy", "test_loss", "train_loss", "time_step", laconic::keys::kBytesSent};
  CHECK(closest_name("test_acc", keys) == "test_accuracy");
  CHECK(closest_name("TEST_ACC", keys) == "test_accuracy");
  CHECK(closest_name("test_los", keys) == "test_loss");
  CHECK(closest_name("trian_loss", keys) == "train_loss");  // two substitutions
  CHECK(closest_name("bytes_snet", keys) == laconic::keys::kBytesSent);
  CHECK(closest_name("accuracy", keys).empty());            // neither a prefix nor close
  CHECK(closest_name("te", keys).empty());                  // two letters fit too many names
  CHECK(closest_name("test_loss", {"test_loss"}).empty());  // a name is never its own suggestion
  CHECK(closest_name("", keys).empty());
}
