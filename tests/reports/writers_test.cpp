#include <cmath>

#include <catch2/catch.hpp>

#include "reports/base64.hpp"
#include "reports/csv_writer.hpp"
#include "reports/html_writer.hpp"
#include "reports/markdown_writer.hpp"
#include "reports/plot_script.hpp"
#include "reports/stats.hpp"

using namespace laconic::reports;

TEST_CASE("base64 matches the RFC 4648 test vectors", "[reports][base64]") {
  CHECK(base64("") == "");
  CHECK(base64("f") == "Zg==");
  CHECK(base64("fo") == "Zm8=");
  CHECK(base64("foo") == "Zm9v");
  CHECK(base64("foob") == "Zm9vYg==");
  CHECK(base64("fooba") == "Zm9vYmE=");
  CHECK(base64("foobar") == "Zm9vYmFy");
  CHECK(base64(std::string("\xff\x00\xfe", 3)) == "/wD+");  // high bytes and a NUL
  CHECK(base64("\x89PNG\r\n\x1a\n") == "iVBORw0KGgo=");
}

TEST_CASE("CSV fields are quoted only when RFC 4180 requires it, quotes doubled", "[reports][csv]") {
  CHECK(csv_field("plain text") == "plain text");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_field("cr\r") == "\"cr\r\"");
  CHECK(csv_field("") == "");

  Table table;
  table.columns = {{"run"}, {"value", Align::Right}};
  table.add_row({"a,b", "1.50 kB"});
  CHECK(render_csv(table) == "run,value\r\n\"a,b\",1.50 kB\r\n");
  table.csv.header = {"run", "bytes"};
  table.rows.clear();
  table.add_row({"x\"y", "1.50 kB"}, {"x\"y", "1500"});
  CHECK(render_csv(table) == "run,bytes\r\n\"x\"\"y\",1500\r\n");  // the raw twin wins
}

TEST_CASE("gnuplot strings escape double quotes and backslashes and blank control characters", "[reports][gnuplot]") {
  CHECK(gnuplot_quote("topk") == R"("topk")");
  CHECK(gnuplot_quote("it's ''") == R"("it's ''")");
  CHECK(gnuplot_quote(R"(a"b)") == R"("a\"b")");
  CHECK(gnuplot_quote(R"(a\101)") == R"("a\\101")");  // no octal escape survives
  CHECK(gnuplot_quote("line\nbreak\t") == R"("line break ")");
  CHECK(data_line({1, std::nan(""), 0.25}) == "1 NaN 0.25\n");
  CHECK(xtics_command({R"(a"b)", "c"}) == "set xtics rotate by -30 left (\"a\\\"b\" 0, \"c\" 1)\n");
}

TEST_CASE("stats use the sample standard deviation and ignore NaN", "[reports][stats]") {
  const Stats s = stats_of({0.75, 0.8, std::nan("")});
  CHECK(s.n == 2);
  CHECK(s.mean == Approx(0.775));
  CHECK(s.std == Approx(0.025 * std::sqrt(2.0)));
  CHECK(mean_std_text(s, 4) == "0.7750 ± 0.0354 (n=2)");
  CHECK(mean_std_text(stats_of({0.5}), 3) == "0.500 (n=1)");
  CHECK(mean_std_text(stats_of({}), 3) == "-");
  CHECK(stats_of({0.5}).std == 0);
  CHECK(median_of({3, 1, 2}) == 2);
  CHECK(median_of({4, 1, 3, 2}) == 2.5);
  CHECK(std::isnan(median_of({std::nan("")})));
}

TEST_CASE("a section's lead is paragraphs split on blank lines, a paragraph of \"- \" lines a list",
          "[reports][html][markdown]") {
  const std::vector<LeadBlock> blocks = lead_blocks("First.\n\nWhich layers:\n\n- a: <b>\n- b\n\n- c\nnot an item");
  REQUIRE(blocks.size() == 4);
  CHECK(blocks[0].text == "First.");
  CHECK(blocks[1].text == "Which layers:");
  CHECK(blocks[2].items == std::vector<std::string>{"a: <b>", "b"});
  CHECK(blocks[2].text.empty());
  CHECK(blocks[3].items.empty());  // one line without the mark: a paragraph, kept whole
  CHECK(blocks[3].text == "- c\nnot an item");

  Report report;
  report.title = "t";
  Section section;
  section.heading = "Advice";
  section.lead = "Ranked.\n\n- a: <b>\n- b";
  report.sections.push_back(section);
  const std::string html = render_html(report);
  CHECK_THAT(html, Catch::Contains("<p>Ranked.</p>\n<ul>\n<li>a: &lt;b&gt;</li>\n<li>b</li>\n</ul>\n"));
  CHECK_THAT(render_markdown(report), Catch::Contains("Ranked.\n\n- a: \\<b\\>\n- b\n\n"));
}
