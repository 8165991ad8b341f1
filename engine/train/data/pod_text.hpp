#pragma once
// The prose of a POD document (Perl's documentation format, perlpod), as plain text: what the
// perldoc corpus is made of. No LibTorch here.
#include <string>
#include <string_view>
#include <vector>

namespace laconic::train {

/// The paragraphs of prose in `pod`, each on one line (its lines joined by single spaces):
/// ordinary paragraphs and the text of =head1-=head6 and =item commands, with formatting codes
/// resolved (B<x>, I<x>, C<x>, F<x>, S<x> -> x; L<text|target> -> text, L<name> -> name,
/// L<name/"section"> -> "section" in name; E<lt> E<gt> E<sol> E<verbar> E<quot> E<amp> and
/// E<number> -> the character, E<nbsp> -> a plain space, other E<...> -> nothing; X<...>, Z<> ->
/// nothing; C<< x >> with
/// doubled brackets as well). Left out: verbatim paragraphs (indented: code), the other commands
/// (=pod, =cut, =over, =back, =encoding, =for) and everything between =begin and =end. Lines
/// outside a POD block (before the first command of a .pm file, after =cut) are code: left out.
std::vector<std::string> pod_paragraphs(std::string_view pod);

/// `text` with POD's formatting codes resolved as pod_paragraphs does.
std::string resolve_pod_codes(std::string_view text);

}  // namespace laconic::train
