#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "reports/format.hpp"
#include "reports/html_writer.hpp"
#include "reports/markdown_writer.hpp"

using namespace laconic::reports;

TEST_CASE("byte counts print in decimal units with three significant digits", "[reports][format]") {
  CHECK(human_bytes(0) == "0 B");
  CHECK(human_bytes(812) == "812 B");
  CHECK(human_bytes(1500) == "1.50 kB");
  CHECK(human_bytes(20000) == "20.0 kB");
  CHECK(human_bytes(2e6) == "2.00 MB");
  CHECK(human_bytes(123.4e6) == "123 MB");
  CHECK(human_bytes(999.7e6) == "1.00 GB");
  CHECK(human_bytes(std::nan("")) == "-");
}

TEST_CASE("ratios, seconds and fixed numbers print a dash for missing values", "[reports][format]") {
  CHECK(ratio(2e6, 2e4) == "100.0x");
  CHECK(ratio(1, 0) == "-");
  CHECK(seconds(0.00123456) == "0.00123");
  CHECK(seconds(std::nan("")) == "-");
  CHECK(fixed(0.78125, 4) == "0.7812");  // round-half-even of the binary value, as printf does
  CHECK(fixed(std::numeric_limits<double>::infinity(), 2) == "inf");
}

TEST_CASE("escaping keeps text from the database out of the markup", "[reports][format]") {
  CHECK(html_escape("<a href=\"x\">Tom & 'Jerry'</a>") ==
        "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;");
  CHECK(markdown_escape("a|b <c>") == "a\\|b \\<c\\>");
  CHECK(markdown_escape("line\nbreak") == "line break");
}

TEST_CASE("a prediction's error against what was measured, signed, in whole percent", "[reports][format]") {
  CHECK(relative_error(1.12, 1.0) == "+12%");
  CHECK(relative_error(0.93, 1.0) == "-7%");
  CHECK(relative_error(1.0, 1.0) == "+0%");
  CHECK(relative_error(1.0, 0.0) == "-");
  CHECK(relative_error(std::nan(""), 1.0) == "-");
}
