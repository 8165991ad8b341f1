#include "advise/probes.hpp"

#include <cctype>
#include <filesystem>
#include <iostream>

#include "engine/core/error.hpp"
#include "engine/core/units.hpp"
#include "reports/format.hpp"
#include "reports/run_data.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

namespace laconic::advise {
namespace {

// The link's parts as the `link` network's fields, in parse_link's order.
std::vector<std::string> link_overrides(const std::string& link, bool between_islands) {
  static const char* const kFields[] = {"bandwidth", "latency", "overhead", "host_bandwidth"};
  const char* const network = between_islands ? "network.between." : "network.";
  std::vector<std::string> out;
  std::size_t from = 0, part = 0;
  while (from <= link.size() && part < 4) {
    const auto comma = link.find(',', from);
    const std::string text = link.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    out.push_back(str_cat(network, kFields[part++], "=", text));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

}  // namespace

double parse_budget(const std::string& text) { return parse_duration("--budget", text); }

std::string budget_forecast(std::size_t probes, std::size_t finished, std::size_t finished_before, double elapsed,
                            double budget, const std::string& budget_text) {
  if (finished <= finished_before || elapsed <= 0) return "";
  const double pace = elapsed / static_cast<double>(finished - finished_before);
  const double total = elapsed + pace * static_cast<double>(probes > finished ? probes - finished : 0);
  if (total <= budget) return "";
  return str_cat("the ", probes, " probes would take about ", reports::seconds(total / 60), " min at the pace of the ",
                 "first (", reports::seconds(pace), " s each), past the ", budget_text,
                 " budget: those not finished by then are left out, and candidates left with one probe have no "
                 "interval. To fit it: fewer seeds (--seeds 1), fewer candidates (a sweep of fewer compressors), "
                 "shorter probes (--set max_steps=N), or a larger --budget");
}

std::string advise_experiment_name(const std::string& experiment, std::int64_t workers, const std::string& link,
                                   RankPlacement placement) {
  std::string tail = link;
  for (char& c : tail)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '-';
  return str_cat(experiment, "-advise-w", workers, "-", tail, placement == RankPlacement::Processes ? "-processes" : "");
}

RankPlacement probe_placement(const std::string& requested, std::int64_t workers, int cores) {
  for (const RankPlacement placement : {RankPlacement::Threads, RankPlacement::Processes})
    if (requested == placement_name(placement)) return placement;
  if (requested != "auto")
    throw ConfigError(str_cat("--placement must be auto, threads or processes, got '", requested, "'"));
  return workers <= cores ? RankPlacement::Processes : RankPlacement::Threads;
}

std::vector<std::string> probe_overrides(const AdviseOptions& args, const std::string& name, RankPlacement placement,
                                         bool between_islands) {
  std::vector<std::string> out = args.overrides;
  std::string seeds;
  for (std::int64_t s = 1; s <= args.seeds; ++s) seeds += (s > 1 ? "," : "") + std::to_string(s);
  for (const std::string& set :
       {str_cat("name=", name), str_cat("workers=", args.workers), str_cat("placement=", placement_name(placement)), "seeds=" + seeds})
    out.push_back(set);
  for (const std::string& set : link_overrides(args.link, between_islands)) out.push_back(set);
  return out;
}

std::int64_t probe_order(const RunConfig& probe) {
  return 2 * probe.seed + (probe.is_baseline() ? 0 : 1);
}

BudgetForecast::BudgetForecast(std::string db, std::string experiment, std::size_t probes, double budget,
                               std::string budget_text)
    : db_(std::move(db)), experiment_(std::move(experiment)), probes_(probes), budget_(budget),
      budget_text_(std::move(budget_text)), before_(finished()) {}

void BudgetForecast::tick(double elapsed) {
  if (said_ || elapsed - last_read_ < 2) return;
  last_read_ = elapsed;
  const std::size_t now = finished();
  if (now <= before_) return;
  said_ = true;
  const std::string warning = budget_forecast(probes_, now, before_, elapsed, budget_, budget_text_);
  if (!warning.empty()) std::cout << "laconic advise: " << warning << std::endl;
}

std::size_t BudgetForecast::finished() const {
  try {
    if (!std::filesystem::exists(db_)) return 0;
    auto db = storage::Database::open_read_only(db_);
    storage::RunFilter filter;
    filter.experiment = experiment_;
    filter.status = "FINISHED";
    return storage::list_runs(*db, filter).size();
  } catch (const StorageError&) {  // locked or being created: next time
    return 0;
  }
}

BudgetWatch::BudgetWatch(double seconds, const std::atomic<bool>& stop, std::atomic<bool>& out,
                         BudgetForecast* forecast)
    : deadline_(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))),
      thread_([this, &stop, &out, forecast, started = Clock::now()] {
        while (!done_) {
          if (stop || Clock::now() >= deadline_) {
            spent_ = !stop;
            out = true;
            return;
          }
          if (forecast != nullptr) forecast->tick(std::chrono::duration<double>(Clock::now() - started).count());
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      }) {}

BudgetWatch::~BudgetWatch() {
  done_ = true;
  thread_.join();
}

}  // namespace laconic::advise
