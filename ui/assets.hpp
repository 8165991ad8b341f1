#pragma once
// The pages' files, built into the binary at build time (ui/CMakeLists.txt writes their bytes
// into a source file): ui/web/ and the pinned chart library from npm (uPlot).
#include <cstddef>
#include <string_view>

namespace laconic::ui {

struct Asset {
  std::string_view name;          ///< "index.html", "app.js", "uPlot.iife.min.js"
  std::string_view content_type;  ///< "text/html; charset=utf-8"
  std::string_view bytes;
};

/// The asset called `name` (no directories: nothing else can be asked for), or null.
const Asset* find_asset(std::string_view name);

}  // namespace laconic::ui
