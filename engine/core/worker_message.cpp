#include "engine/core/worker_message.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace laconic {
namespace {

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%.17g", v);
  return std::string(buf, static_cast<std::size_t>(n));
}

bool parse_double(std::string_view s, double& out) {
  if (s == "nan") {
    out = std::nan("");
    return true;
  }
  if (s == "inf") {
    out = INFINITY;
    return true;
  }
  if (s == "-inf") {
    out = -INFINITY;
    return true;
  }
  std::string copy(s);
  char* end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  return !copy.empty() && end == copy.c_str() + copy.size();
}

bool parse_int(std::string_view s, std::int64_t& out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t tab = line.find('\t', start);
    parts.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  return parts;
}

}  // namespace

// Tabs and newlines in free text would break the framing.
std::string escape_field(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string unescape_field(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      char n = text[++i];
      out += n == 't' ? '\t' : n == 'n' ? '\n' : n;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string encode_message(const WorkerMessage& message) {
  if (auto m = std::get_if<MetricRecord>(&message))
    return "M\t" + escape_field(m->key) + "\t" + std::to_string(m->step) + "\t" + std::to_string(m->epoch) + "\t" +
           std::to_string(m->worker) + "\t" + format_double(m->wall_time) + "\t" + format_double(m->value) + "\n";
  if (auto p = std::get_if<ProgressMessage>(&message))
    return "P\t" + std::to_string(p->epoch) + "\t" + std::to_string(p->step) + "\t" +
           std::to_string(p->steps_per_epoch) + "\t" + format_double(p->loss) + "\t" +
           format_double(p->steps_per_second) + "\n";
  if (auto c = std::get_if<CheckpointMessage>(&message)) return "C\t" + std::to_string(c->step) + "\n";
  if (auto f = std::get_if<FactMessage>(&message))
    return "F\t" + escape_field(f->key) + "\t" + escape_field(f->value) + "\n";
  if (auto h = std::get_if<HeartbeatMessage>(&message))
    return "H\t" + escape_field(h->phase) + "\t" + format_double(h->quiet) + "\n";
  return "E\t" + escape_field(std::get<FailureMessage>(message).text) + "\n";
}

std::optional<WorkerMessage> decode_message(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  auto parts = split_tabs(line);
  if (parts[0] == "M" && parts.size() == 7) {
    MetricRecord m;
    m.key = unescape_field(parts[1]);
    std::int64_t worker = 0;
    if (!parse_int(parts[2], m.step) || !parse_int(parts[3], m.epoch) || !parse_int(parts[4], worker) ||
        !parse_double(parts[5], m.wall_time) || !parse_double(parts[6], m.value))
      return std::nullopt;
    m.worker = static_cast<int>(worker);
    return m;
  }
  if (parts[0] == "P" && parts.size() == 6) {
    ProgressMessage p;
    if (!parse_int(parts[1], p.epoch) || !parse_int(parts[2], p.step) || !parse_int(parts[3], p.steps_per_epoch) ||
        !parse_double(parts[4], p.loss) || !parse_double(parts[5], p.steps_per_second))
      return std::nullopt;
    return p;
  }
  if (parts[0] == "E" && parts.size() == 2) return FailureMessage{unescape_field(parts[1])};
  if (parts[0] == "F" && parts.size() == 3) return FactMessage{unescape_field(parts[1]), unescape_field(parts[2])};
  if (parts[0] == "H" && parts.size() == 3) {
    HeartbeatMessage h{unescape_field(parts[1]), 0};
    if (!parse_double(parts[2], h.quiet)) return std::nullopt;
    return h;
  }
  if (parts[0] == "C" && parts.size() == 2) {
    CheckpointMessage c;
    if (!parse_int(parts[1], c.step)) return std::nullopt;
    return c;
  }
  return std::nullopt;
}

MessageWriter::~MessageWriter() {
  // Destructors never throw; a lost tail here means the controller is gone anyway.
  try {
    flush();
  } catch (const std::exception&) {}
}

void MessageWriter::send(const WorkerMessage& message) {
  const std::string line = encode_message(message);
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (buffer_.empty()) oldest_ = now;
  buffer_ += line;
  if (buffer_.size() >= 16 * 1024 || now - oldest_ >= std::chrono::milliseconds(250)) flush_locked();
}

void MessageWriter::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_locked();
}

void MessageWriter::flush_locked() {
  std::size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the controller closed its end; nothing left to tell
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

}  // namespace laconic
