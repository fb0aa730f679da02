// Progress of the runner's phases (preparing and checking the cases, building the timers, the
// visits), on stderr only: stdout carries the tables and --format json.
//
// On a terminal a phase redraws one line in place (phase, done/total, elapsed, and an ETA from
// the phase's rate so far), at most ten times a second, and clears it when it ends; anywhere else
// (a log, CI, a worker under --isolate or --devices) nothing is drawn. Either way each phase ends
// with one log line (on stderr, as every log message: log_to_stderr): its name, how many items,
// how many seconds. A log message written while a line is drawn clears it first
// (progress_clearing_sink), so the two never share a row.
//
// The clock, the line's stream and the log are given in ProgressOutput so that the CPU tests
// drive a phase with made-up times (tests/cpu/test_progress.cpp).
#pragma once

#include <spdlog/sinks/sink.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace kbench {

// The ETA needs this many items done: before that the rate is one slow first case (the first
// allocation, the first graph capture), not the phase's.
constexpr std::size_t kEtaAfterItems = 3;

// Seconds left if the rest of the phase goes at its rate so far (elapsed / done per item); none
// before kEtaAfterItems items or when nothing is left.
std::optional<double> eta_seconds(std::size_t done, std::size_t total, double elapsed_s);

// "0:07", "12:34", "1:02:03": whole seconds as a clock shows them.
std::string clock_text(double seconds);

struct ProgressOutput {
  bool terminal = false;                        // draw the line (else only the closing log line)
  std::ostream* line = nullptr;                 // where the line is drawn (std::cerr)
  std::size_t width = 0;                        // the terminal's columns: a longer line is cut; 0: no cut
  std::function<void(const std::string&)> log;  // each phase's closing line (spdlog::info)
  std::function<double()> now;                  // seconds on a steady clock
  double redraw_interval_s = 0.1;               // at most ten redraws a second
};

// The process's: a terminal when stderr is one and info messages are shown (not under -q).
ProgressOutput stderr_progress();

// One phase: `total` items of `items` ("cases", "visits"), begun when constructed.
class PhaseProgress {
 public:
  PhaseProgress(ProgressOutput out, std::string phase, std::size_t total, std::string items);
  ~PhaseProgress();  // finish(), if not yet called
  PhaseProgress(const PhaseProgress&) = delete;
  PhaseProgress& operator=(const PhaseProgress&) = delete;

  // `done` of `total` items (a stopping rule's rounds may raise the total); `detail` (the case
  // at hand) ends the drawn line.
  void advance(std::size_t done, std::size_t total, const std::string& detail = "");
  // Ends the phase: clears the line and logs "<phase>: <done> <items> in <s> s" and `note`.
  void finish(const std::string& note = "");

  // The line as drawn at `elapsed_s` (without the leading "\r\033[K").
  std::string line_text(double elapsed_s) const;

  void clear_line();  // clears the drawn line, if any (called by progress_clearing_sink)

 private:
  void draw(double now);

  ProgressOutput out_;
  std::string phase_, items_, detail_;
  std::size_t done_ = 0, total_ = 0;
  double began_ = 0;
  std::optional<double> drawn_at_;  // when the line was last drawn; none: nothing drawn now
  bool finished_ = false;
};

// A sink for spdlog's default logger that clears a drawn progress line before it writes each
// message, and otherwise does what `inner` does.
std::shared_ptr<spdlog::sinks::sink> progress_clearing_sink(std::shared_ptr<spdlog::sinks::sink> inner);

// Makes spdlog's default logger write to stderr, through progress_clearing_sink, as
// "[HH:MM:SS] level message": every log message and phase line of the process goes there, and
// stdout carries only a command's product (its table, csv or json, the plan, the report).
// Called first thing by main() and by the Python module; the level stays spdlog's global one.
void log_to_stderr();

}  // namespace kbench
