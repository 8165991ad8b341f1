// The prose of POD documents (engine/train/data/pod_text.cpp), the perldoc corpus's decoding.
#include "engine/train/data/pod_text.hpp"

#include <catch2/catch.hpp>

using laconic::train::pod_paragraphs;
using laconic::train::resolve_pod_codes;

TEST_CASE("POD formatting codes resolve to their text", "[train][pod]") {
  CHECK(resolve_pod_codes("B<bold>, I<it>, C<code>, F<file>, S<no break>") == "bold, it, code, file, no break");
  CHECK(resolve_pod_codes("C<< $a <=> $b >> and C<<< x >> y >>>") == "$a <=> $b and x >> y");
  CHECK(resolve_pod_codes("B<nested I<codes>>") == "nested codes");
  CHECK(resolve_pod_codes("L<perlop>, L<the ops|perlop>, L<perlop/\"Quote\">, L</DESCRIPTION>") ==
        "perlop, the ops, \"Quote\" in perlop, \"DESCRIPTION\"");
  CHECK(resolve_pod_codes("L<https://www.perl.org/>") == "https://www.perl.org/");
  CHECK(resolve_pod_codes("1 E<lt> 2 E<gt> 0, aE<sol>b, E<233>, E<0x263A>, E<unknown>") ==
        "1 < 2 > 0, a/b, \xC3\xA9, \xE2\x98\xBA, ");
  CHECK(resolve_pod_codes("indexX<index entry> hereZ<>") == "index here");
  CHECK(resolve_pod_codes("noE<nbsp>break") == "no break");
  CHECK(resolve_pod_codes("a C<< never closed") == "a never closed");
  CHECK(resolve_pod_codes("2 < 3 and 4 > 1, Bx<y>") == "2 < 3 and 4 > 1, Bx<y>");
}

TEST_CASE("a POD document's prose is its ordinary paragraphs and headings, each on one line", "[train][pod]") {
  const char* pod =
      "#!/usr/bin/perl\n"
      "code before any POD\n"
      "\n"
      "=head1 NAME\n"
      "\n"
      "perlfoo - how to B<foo>\n"
      "across two lines\n"
      "\n"
      "    my $code = 'verbatim';\n"
      "    print $code;\n"
      "\n"
      "=over 4\n"
      "\n"
      "=item *\n"
      "\n"
      "A bullet's text.\n"
      "\n"
      "=item The C<-x> switch\n"
      "\n"
      "=back\n"
      "\n"
      "=begin html\n"
      "\n"
      "<p>not prose</p>\n"
      "\n"
      "=end html\n"
      "\n"
      "=for comment left out\n"
      "\n"
      "=cut\n"
      "\n"
      "sub more_code { 1 }\n"
      "\n"
      "=pod\n"
      "\n"
      "Last words.\n";
  const std::vector<std::string> expected = {"NAME", "perlfoo - how to foo across two lines", "A bullet's text.",
                                             "The -x switch", "Last words."};
  CHECK(pod_paragraphs(pod) == expected);
}

TEST_CASE("a blank line of spaces ends a POD paragraph, and a document without POD has no prose", "[train][pod]") {
  CHECK(pod_paragraphs("=pod\n\nfirst\n   \t\nsecond\n") == std::vector<std::string>{"first", "second"});
  CHECK(pod_paragraphs("print 1;\n\nprint 2;\n").empty());
  CHECK(pod_paragraphs("").empty());
}
