#include "controller/worker_args.hpp"

#include <cstdio>
#include <type_traits>

#include <CLI/CLI.hpp>

namespace laconic::controller {
namespace {

/// Calls `visit(flag, member, required)` for every field, `member` a pointer to it: the one
/// list both to_argv() and add_worker_options() read.
template <class Visit>
void visit_fields(Visit&& visit) {
  using A = WorkerArgs;
  visit("--file", &A::file, true);
  visit("--file-hash", &A::file_hash, false);
  visit("--set", &A::overrides, false);
  visit("--order", &A::order, true);
  visit("--rank", &A::rank, true);
  visit("--store", &A::store, true);
  visit("--hostname", &A::hostname, false);
  visit("--interface", &A::interface, false);
  visit("--message-fd", &A::message_fd, false);
  visit("--checkpoint-dir", &A::checkpoint_dir, false);
  visit("--checkpoint-every", &A::checkpoint_every, false);
  visit("--resume-step", &A::resume_step, false);
  visit("--incarnation", &A::incarnation, false);
  visit("--netns", &A::netns, false);
  visit("--message-delay", &A::message_delay, false);
  visit("--message-delay-between", &A::message_delay_between, false);
}

template <class T>
std::string word(const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    return value;
  } else if constexpr (std::is_same_v<T, LaunchOrder>) {
    return value.to_json();
  } else if constexpr (std::is_floating_point_v<T>) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);  // read back to the same double
    return text;
  } else {
    return std::to_string(value);
  }
}

}  // namespace

std::vector<std::string> WorkerArgs::to_argv() const {
  static const WorkerArgs kDefaults;
  std::vector<std::string> argv;
  visit_fields([&](const char* flag, auto member, bool required) {
    const auto& value = this->*member;
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::vector<std::string>>) {
      for (const std::string& item : value) argv.insert(argv.end(), {flag, item});
    } else if (required || value != kDefaults.*member) {
      argv.insert(argv.end(), {flag, word(value)});
    }
  });
  return argv;
}

void add_worker_options(CLI::App& command, WorkerArgs& args) {
  visit_fields([&](const char* flag, auto member, bool required) {
    CLI::Option* option = nullptr;
    if constexpr (std::is_same_v<std::decay_t<decltype(args.*member)>, LaunchOrder>) {
      option = command.add_option_function<std::string>(flag, [&args, member](const std::string& text) {
        const auto order = LaunchOrder::from_json(text);
        if (!order) throw CLI::ValidationError("--order", "not a launch order of this laconic: " + text);
        args.*member = *order;
      });
    } else {
      option = command.add_option(flag, args.*member);
    }
    if (required) option->required();
    if constexpr (std::is_same_v<std::decay_t<decltype(args.*member)>, std::vector<std::string>>)
      option->allow_extra_args(false);
  });
}

}  // namespace laconic::controller
