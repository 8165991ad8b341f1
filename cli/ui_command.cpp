#include "cli/ui_command.hpp"

#include "cli/runs_command.hpp"

#include <signal.h>

#include <atomic>
#include <iostream>

namespace laconic::cli {
namespace {

// Signal handlers can only reach a global: the server's stop request.
std::atomic<bool> g_stop_ui{false};

void request_stop(int) { g_stop_ui = true; }

}  // namespace

int ui_command(const ui::UiOptions& options) {
  require_database(options.db);  // a missing file is the user's to fix: exit 2, as every reading command
  struct sigaction action {};
  action.sa_handler = request_stop;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  ui::serve_ui(options, g_stop_ui, [&](const std::string& url) {
    std::cout << "laconic ui: " << url << " (database " << options.db
              << ", read-only; Ctrl-C stops it)" << std::endl;
  });
  std::cout << "laconic ui: stopped" << std::endl;
  return 0;
}

}  // namespace laconic::cli
