#include "controller/relay_protocol.hpp"

#include <string_view>

#include "engine/core/error.hpp"
#include "engine/core/worker_message.hpp"

namespace laconic::controller {
namespace {

// The fields of a line that starts with `tag` and has `count` fields in all; nothing otherwise.
std::optional<std::vector<std::string>> fields_of(const std::string& line, std::string_view tag, std::size_t count) {
  auto fields = relay_fields(line);
  if (fields.size() != count || fields[0] != tag) return std::nullopt;
  return fields;
}

// A whole decimal number, or nothing.
template <class Int>
std::optional<Int> number_of(const std::string& text) {
  try {
    std::size_t used = 0;
    const long long value = std::stoll(text, &used);
    if (used != text.size()) return std::nullopt;
    return static_cast<Int>(value);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<std::string> relay_fields(const std::string& line) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto tab = line.find('\t', start);
    parts.push_back(unescape_field(line.substr(start, tab == std::string::npos ? tab : tab - start)));
    if (tab == std::string::npos) return parts;
    start = tab + 1;
  }
}

std::string encode(const RankHello& h) {
  return str_cat("L\t", h.rank, "\t", h.world, "\t", escape_field(h.file_hash), "\t", escape_field(h.plan), "\t",
                 escape_field(h.host), "\t", escape_field(h.address), "\t", h.cores, "\t", h.pid);
}

std::optional<RankHello> decode_hello(const std::string& line) {
  const auto f = fields_of(line, "L", 9);
  if (!f) return std::nullopt;
  const auto rank = number_of<int>((*f)[1]), world = number_of<int>((*f)[2]), cores = number_of<int>((*f)[7]);
  const auto pid = number_of<long>((*f)[8]);
  if (!rank || !world || !cores || !pid) return std::nullopt;
  return RankHello{*rank, *world, (*f)[3], (*f)[4], (*f)[5], (*f)[6], *cores, *pid};
}

std::string encode(const JoinAnswer& answer) {
  if (const auto* accepted = std::get_if<JoinAccepted>(&answer)) return "O\t" + escape_field(accepted->nonce);
  return "!\t" + escape_field(std::get<JoinRefused>(answer).why);
}

std::optional<JoinAnswer> decode_join_answer(const std::string& line) {
  if (const auto f = fields_of(line, "O", 2)) return JoinAccepted{(*f)[1]};
  if (const auto f = fields_of(line, "!", 2)) return JoinRefused{(*f)[1]};
  return std::nullopt;
}

std::string encode(const RankOrder& order) {
  if (const auto* run = std::get_if<LaunchOrder>(&order)) return "R\t" + escape_field(run->to_json());
  if (const auto* signal = std::get_if<SignalOrder>(&order)) return str_cat("S\t", signal->signal);
  if (std::holds_alternative<StillAlive>(order)) return "P";
  if (const auto* again = std::get_if<RelaunchOrder>(&order)) return str_cat("A\t", again->incarnation);
  return str_cat("D\t", std::get<SweepDone>(order).status);
}

std::optional<RankOrder> decode_order(const std::string& line) {
  if (const auto f = fields_of(line, "R", 2)) {
    if (auto run = LaunchOrder::from_json((*f)[1])) return *run;
  } else if (const auto s = fields_of(line, "S", 2)) {
    if (const auto signal = number_of<int>((*s)[1])) return SignalOrder{*signal};
  } else if (fields_of(line, "P", 1)) {
    return StillAlive{};
  } else if (const auto a = fields_of(line, "A", 2)) {
    if (const auto incarnation = number_of<int>((*a)[1])) return RelaunchOrder{*incarnation};
  } else if (const auto d = fields_of(line, "D", 2)) {
    if (const auto status = number_of<int>((*d)[1])) return SweepDone{*status};
  }
  return std::nullopt;
}

std::string encode(const WorkerExit& exit) { return str_cat("X\t", exit.status); }

std::optional<WorkerExit> decode_worker_exit(const std::string& line) {
  const auto f = fields_of(line, "X", 2);
  if (!f) return std::nullopt;
  const auto status = number_of<int>((*f)[1]);
  if (!status) return std::nullopt;
  return WorkerExit{*status};
}

}  // namespace laconic::controller
