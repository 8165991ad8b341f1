// The perldoc corpus as decoded on this machine (engine/train/data/perldoc.hpp): files,
// paragraphs, repeats left out, the seconds the decoding took, and each split's bytes and windows
// at a context (default 128): the figures docs/models-and-data.md quotes.
//
// usage: laconic_perldoc_stats [CONTEXT] [ROOT]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/train/data/perldoc.hpp"

int main(int argc, char** argv) {
  const long context = argc > 1 ? std::atol(argv[1]) : 128;
  const std::string folder = laconic::train::perldoc_folder(argc > 2 ? argv[2] : "");
  const auto start = std::chrono::steady_clock::now();
  const auto corpus = laconic::train::perldoc_corpus(folder);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("folder %s\nfiles %zu\nparagraphs %zu, of which repeats left out %zu (%zu bytes)\ndecoded in %.2f s\n",
              folder.c_str(), corpus.files, corpus.paragraphs, corpus.repeats, corpus.repeated_bytes, seconds);
  const char* names[3] = {"training", "validation", "test"};
  std::size_t total = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t bytes = corpus.texts[i].size();
    total += bytes;
    std::printf("%-10s %9zu bytes, %6zu windows of %ld\n", names[i], bytes, bytes > 0 ? (bytes - 1) / context : 0,
                context);
  }
  std::printf("total      %9zu bytes\n", total);
  return 0;
}
