#include "engine/train/data/pod_text.hpp"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace laconic::train {
namespace {

bool space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// A code point as UTF-8 (nothing for one past Unicode's range).
std::string utf8(std::uint32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x110000) {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

// E<...>: the escapes perlpod names, and numbers (decimal, 0x hex, 0 octal).
std::string escape(const std::string& name) {
  static const std::pair<const char*, const char*> kNamed[] = {
      {"lt", "<"}, {"gt", ">"}, {"sol", "/"}, {"verbar", "|"}, {"quot", "\""}, {"amp", "&"}, {"nbsp", " "}};
  for (const auto& [word, text] : kNamed)
    if (name == word) return text;
  if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) return "";
  char* end = nullptr;
  const unsigned long code = std::strtoul(name.c_str(), &end, 0);
  return *end == '\0' ? utf8(static_cast<std::uint32_t>(code)) : "";
}

// L<...>: "text|target" -> text; "name/section" -> "section" in name; "/section" -> "section".
std::string link(const std::string& inner) {
  if (const auto bar = inner.find('|'); bar != std::string::npos) return inner.substr(0, bar);
  if (inner.find("://") != std::string::npos) return inner;
  const auto slash = inner.find('/');
  if (slash == std::string::npos) return inner;
  std::string section = inner.substr(slash + 1);
  if (section.size() >= 2 && section.front() == '"' && section.back() == '"') section = section.substr(1, section.size() - 2);
  const std::string quoted = "\"" + section + "\"";
  return slash == 0 ? quoted : quoted + " in " + inner.substr(0, slash);
}

// Reads formatting codes recursively (perlpod, "Formatting Codes").
class CodeReader {
 public:
  explicit CodeReader(std::string_view text) : s_(text) {}
  std::string all() { return until(0); }

 private:
  // Up to the end of a code opened with `brackets` angle brackets (0: to the end of the text).
  std::string until(std::size_t brackets) {
    std::string out;
    while (i_ < s_.size()) {
      if (brackets == 1 && s_[i_] == '>') {
        ++i_;
        return out;
      }
      if (brackets > 1 && closes(brackets)) {
        while (space(s_[i_])) ++i_;
        i_ += brackets;
        return out;
      }
      if (code_starts()) {
        out += code();
        continue;
      }
      out += s_[i_++];
    }
    return out;  // not closed: what there was
  }

  // Whitespace and then `brackets` '>': the end of C<< ... >>.
  bool closes(std::size_t brackets) const {
    if (!space(s_[i_])) return false;
    std::size_t j = i_;
    while (j < s_.size() && space(s_[j])) ++j;
    return s_.substr(j, brackets) == std::string(brackets, '>');
  }

  bool code_starts() const {
    // strchr finds a '\0' too (the letters' own terminator): a NUL byte is not a code.
    return i_ + 1 < s_.size() && s_[i_] != '\0' && std::strchr("IBCLEFSXZ", s_[i_]) != nullptr && s_[i_ + 1] == '<';
  }

  std::string code() {
    const char letter = s_[i_++];
    std::size_t brackets = 0;
    while (i_ < s_.size() && s_[i_] == '<') ++brackets, ++i_;
    if (brackets > 1) {
      if (i_ < s_.size() && space(s_[i_])) {
        while (i_ < s_.size() && space(s_[i_])) ++i_;
      } else {
        brackets = 1;  // "C<<x>" is not the doubled form: a code of one bracket whose text starts with '<'
        --i_;
      }
    }
    const std::string inner = until(brackets);
    switch (letter) {
      case 'X':
      case 'Z':
        return "";
      case 'E':
        return escape(inner);
      case 'L':
        return link(inner);
      default:
        return inner;
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

// Whitespace runs as one space, none at either end.
std::string one_line(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (!space(c)) {
      out += c;
    } else if (!out.empty() && out.back() != ' ') {
      out += ' ';
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The paragraphs of `pod`: runs of lines between blank lines (whitespace only).
std::vector<std::string> paragraphs(std::string_view pod) {
  std::vector<std::string> out;
  std::string current;
  std::size_t at = 0;
  while (at <= pod.size()) {
    const std::size_t end = std::min(pod.find('\n', at), pod.size());
    const std::string_view line = pod.substr(at, end - at);
    const bool blank = line.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
    if (blank) {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
    } else {
      current.append(line).push_back('\n');
    }
    at = end + 1;
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

// "=head2 Text\n" -> {"head2", "Text\n"}.
std::pair<std::string, std::string> command_of(const std::string& paragraph) {
  std::size_t end = 1;
  while (end < paragraph.size() && !space(paragraph[end])) ++end;
  return {paragraph.substr(1, end - 1), end < paragraph.size() ? paragraph.substr(end) : std::string()};
}

// An =item's text that is only a bullet or a number ("*", "1.", "2") says nothing.
bool bullet_only(const std::string& text) {
  return text.find_first_not_of("*0123456789.) ") == std::string::npos;
}

}  // namespace

std::string resolve_pod_codes(std::string_view text) { return CodeReader(text).all(); }

std::vector<std::string> pod_paragraphs(std::string_view pod) {
  std::vector<std::string> out;
  bool in_pod = false;
  std::string region;  // the format of an open =begin, until its =end
  for (const std::string& paragraph : paragraphs(pod)) {
    const bool command = paragraph.size() > 1 && paragraph[0] == '=' && std::isalpha(static_cast<unsigned char>(paragraph[1]));
    if (command) {
      const auto [name, text] = command_of(paragraph);
      in_pod = name != "cut";
      if (!region.empty()) {
        if (name == "end") region.clear();
        continue;
      }
      if (name == "begin") region = text.empty() ? std::string("?") : text;
      const bool prose = name.rfind("head", 0) == 0 || name == "item";
      if (!prose) continue;
      std::string line = one_line(resolve_pod_codes(text));
      if (!line.empty() && !(name == "item" && bullet_only(line))) out.push_back(std::move(line));
      continue;
    }
    if (!in_pod || !region.empty() || space(paragraph[0])) continue;  // code, a region, or verbatim
    std::string line = one_line(resolve_pod_codes(paragraph));
    if (!line.empty()) out.push_back(std::move(line));
  }
  return out;
}

}  // namespace laconic::train
