#include "reports/gnuplot.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "engine/core/error.hpp"

namespace laconic::reports {
namespace {

namespace fs = std::filesystem;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw ConfigError(str_cat("cannot write ", path.string(), ": ", std::strerror(errno)));
}

// Ten line types that stay apart in colour (Okabe and Ito's palette, safe for colour-blind
// readers, and four more) and in dash pattern and point shape, so that 5 to 10 configurations in
// one figure can be told apart in print too. `reset` keeps them.
const char* const kLineTypes =
    "set linetype 1 linecolor rgb '#0072b2' linewidth 2 dashtype 1 pointtype 7\n"
    "set linetype 2 linecolor rgb '#d55e00' linewidth 2 dashtype 2 pointtype 5\n"
    "set linetype 3 linecolor rgb '#009e73' linewidth 2 dashtype 3 pointtype 9\n"
    "set linetype 4 linecolor rgb '#cc79a7' linewidth 2 dashtype 4 pointtype 11\n"
    "set linetype 5 linecolor rgb '#e69f00' linewidth 2 dashtype 5 pointtype 13\n"
    "set linetype 6 linecolor rgb '#56b4e9' linewidth 2 dashtype 1 pointtype 4\n"
    "set linetype 7 linecolor rgb '#000000' linewidth 2 dashtype 2 pointtype 6\n"
    "set linetype 8 linecolor rgb '#999999' linewidth 2 dashtype 3 pointtype 8\n"
    "set linetype 9 linecolor rgb '#8c564b' linewidth 2 dashtype 4 pointtype 10\n"
    "set linetype 10 linecolor rgb '#7b3294' linewidth 2 dashtype 5 pointtype 12\n"
    "set linetype cycle 10\n";

// One script for all figures: starting gnuplot once costs more than drawing a figure.
std::string driver_script(const std::vector<FigurePlot>& plots) {
  std::ostringstream out;
  out << "# Written by laconic report: draws every figure as NAME.svg and NAME.png.\n"
         "set encoding utf8\n"
         "svg_terminal = \"set terminal svg size 900,520 dynamic noenhanced font 'sans,11' background '#ffffff'\"\n"
         "png_terminal = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0 ? "
         "\"set terminal pngcairo size 900,520 noenhanced font 'sans,10' background '#ffffff'\" : "
         "\"set terminal png size 900,520 noenhanced background '#ffffff'\"\n"
      << kLineTypes;
  for (const auto& plot : plots) {
    const std::string& name = plot.figure.name;
    for (const char* format : {"svg", "png"})
      out << "\nreset\neval " << format << "_terminal\nset output '" << name << "." << format << "'\nload '" << name
          << ".gp'\nunset output\n";
  }
  return out.str();
}

std::string last_line_of(const fs::path& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t^") != std::string::npos) last = line;
  return last;
}

// What the child reports on its pipe when it fails before gnuplot runs: the step and errno.
struct ChildFailure {
  int step = 0;  // 1: entering the directory, 2: exec
  int error = 0;
};

// Runs `executable figures.gp` in `dir`; returns "" on exit status 0, else why it failed. The
// log is opened here, before the child changes directory, so a relative `dir` works (the child
// used to open "DIR/figures/gnuplot.log" relative to DIR/figures).
std::string run_gnuplot(const GnuplotOptions& options, const fs::path& dir) {
  const std::string log = (dir / "gnuplot.log").string();
  const std::string directory = dir.string();
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return str_cat("cannot write the gnuplot log ", log, ": ", std::strerror(errno));
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int exec_error[2];
  if (::pipe2(exec_error, O_CLOEXEC) != 0) {
    const std::string why = str_cat("cannot start gnuplot: ", std::strerror(errno));
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    return why;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls from here on
    ChildFailure failure;
    if (::chdir(directory.c_str()) != 0) {
      failure = {1, errno};
    } else {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
      if (null_fd >= 0) ::dup2(null_fd, 0);
      ::execlp(options.executable.c_str(), options.executable.c_str(), "figures.gp", static_cast<char*>(nullptr));
      failure = {2, errno};
    }
    [[maybe_unused]] auto ignored = ::write(exec_error[1], &failure, sizeof failure);
    ::_exit(127);
  }
  const int fork_error = errno;
  ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  ::close(exec_error[1]);
  if (pid < 0) {
    ::close(exec_error[0]);
    return str_cat("cannot start gnuplot: ", std::strerror(fork_error));
  }
  ChildFailure failure;
  const bool child_failed = ::read(exec_error[0], &failure, sizeof failure) == static_cast<ssize_t>(sizeof failure);
  ::close(exec_error[0]);

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.timeout_seconds);
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return str_cat("lost the gnuplot process: ", std::strerror(errno));
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return str_cat("gnuplot was killed after its time limit of ", options.timeout_seconds, " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (child_failed && failure.step == 1)
    return str_cat("cannot enter the figure directory ", directory, ": ", std::strerror(failure.error));
  if (child_failed)
    return str_cat("cannot run gnuplot '", options.executable, "': ", std::strerror(failure.error),
                   failure.error == ENOENT ? " (install gnuplot-nox, or give --gnuplot PATH)" : "");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  const std::string why =
      WIFEXITED(status) ? str_cat("exit status ", WEXITSTATUS(status)) : str_cat("signal ", WTERMSIG(status));
  return str_cat("gnuplot failed (", why, "): ", last_line_of(log), " (see ", log, ")");
}

bool non_empty(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && fs::file_size(path, error) > 0;
}

}  // namespace

std::vector<std::string> draw_figures(const std::vector<FigurePlot>& plots, const fs::path& dir,
                                      const GnuplotOptions& options) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw ConfigError(str_cat("cannot create figure directory ", dir.string(), ": ", error.message()));
  for (const auto& plot : plots) {
    for (const auto& [file, content] : plot.data_files) write_text(dir / file, content);
    write_text(dir / (plot.figure.name + ".gp"), plot.commands);
    for (const char* extension : {".svg", ".png"}) fs::remove(dir / (plot.figure.name + extension), error);
  }
  std::vector<std::string> missing(plots.size());
  if (plots.empty()) return missing;
  write_text(dir / "figures.gp", driver_script(plots));
  const std::string failure = run_gnuplot(options, dir);
  for (std::size_t i = 0; i < plots.size(); ++i) {
    const std::string& name = plots[i].figure.name;
    if (non_empty(dir / (name + ".svg")) && non_empty(dir / (name + ".png"))) continue;
    missing[i] = failure.empty() ? str_cat("gnuplot drew no ", name, ".svg / ", name, ".png") : failure;
  }
  return missing;
}

}  // namespace laconic::reports
