#pragma once
// `laconic ui`: a local web server over one database, read-only, serving the API of
// ui/api.hpp, an event stream that announces every commit another process makes, and the pages
// (ui/web/), built into the binary so that it works offline (docs/ui.md).
#include <atomic>
#include <functional>
#include <string>

namespace laconic::ui {

struct UiOptions {
  std::string db = "laconic.db";
  std::string host = "127.0.0.1";  ///< the address it listens on: this machine only, by default
  int port = 8686;                 ///< 0: any free port (the URL it prints says which)
};

/// Serves until `stop` becomes true. `on_listening` gets the URL once the port is bound.
/// ConfigError when the port is taken (SO_REUSEPORT is off, so a second server cannot share it)
/// or the database is missing, of an older schema or not a laconic database.
void serve_ui(const UiOptions& options, const std::atomic<bool>& stop,
              const std::function<void(const std::string& url)>& on_listening);

}  // namespace laconic::ui
