#include "harness/progress.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <mutex>

namespace kbench {

namespace {

// The phase whose line is drawn now, if any: what the clearing sink clears. One at a time; the
// runner's phases follow one another.
std::mutex active_mutex;
PhaseProgress* active = nullptr;

void set_active(PhaseProgress* p) {
  const std::lock_guard<std::mutex> lock(active_mutex);
  active = p;
}

void clear_active_line() {
  const std::lock_guard<std::mutex> lock(active_mutex);
  if (active) active->clear_line();
}

class ClearingSink : public spdlog::sinks::sink {
 public:
  explicit ClearingSink(std::shared_ptr<spdlog::sinks::sink> inner) : inner_(std::move(inner)) {}
  void log(const spdlog::details::log_msg& msg) override {
    if (!inner_->should_log(msg.level)) return;
    clear_active_line();
    inner_->log(msg);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override { inner_->set_formatter(std::move(f)); }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

}  // namespace

std::optional<double> eta_seconds(std::size_t done, std::size_t total, double elapsed_s) {
  if (done < kEtaAfterItems || done >= total || !(elapsed_s >= 0)) return std::nullopt;
  return elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
}

std::string clock_text(double seconds) {
  const long s = std::isfinite(seconds) && seconds > 0 ? std::lround(seconds) : 0;
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

ProgressOutput stderr_progress() {
  ProgressOutput out;
  out.terminal = isatty(fileno(stderr)) && spdlog::should_log(spdlog::level::info);
  out.line = &std::cerr;
  if (winsize ws{}; out.terminal && ioctl(fileno(stderr), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
    out.width = ws.ws_col - 1;  // a line as wide as the terminal wraps on some, and "\r" then misses its start
  out.log = [](const std::string& line) { spdlog::info("{}", line); };  // to stderr (log_to_stderr); not under -q
  out.now = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  return out;
}

PhaseProgress::PhaseProgress(ProgressOutput out, std::string phase, std::size_t total, std::string items)
    : out_(std::move(out)), phase_(std::move(phase)), items_(std::move(items)), total_(total) {
  if (!out_.now) out_.now = stderr_progress().now;
  if (out_.terminal && !out_.line) out_.terminal = false;
  began_ = out_.now();
}

PhaseProgress::~PhaseProgress() {
  try {
    finish();
  } catch (...) {  // a log that throws while the stack unwinds must not end the process
  }
}

std::string PhaseProgress::line_text(double elapsed_s) const {
  std::string text = phase_ + " " + std::to_string(done_) + "/" + std::to_string(total_) + " " + items_ + ", " +
                     clock_text(elapsed_s);
  if (const auto eta = eta_seconds(done_, total_, elapsed_s)) text += ", ETA " + clock_text(*eta);
  if (!detail_.empty()) text += ": " + detail_;
  if (out_.width > 0 && text.size() > out_.width) text.resize(out_.width);
  return text;
}

void PhaseProgress::draw(double now) {
  if (!drawn_at_) set_active(this);
  *out_.line << "\r\033[K" << line_text(now - began_) << std::flush;
  drawn_at_ = now;
}

void PhaseProgress::advance(std::size_t done, std::size_t total, const std::string& detail) {
  done_ = done;
  total_ = total;
  detail_ = detail;
  if (!out_.terminal || finished_) return;
  const double now = out_.now();
  // A line cleared by a log message is drawn again at once; a drawn one at most every interval.
  if (drawn_at_ && now - *drawn_at_ < out_.redraw_interval_s) return;
  draw(now);
}

void PhaseProgress::clear_line() {
  if (!drawn_at_) return;
  *out_.line << "\r\033[K" << std::flush;
  drawn_at_.reset();
}

void PhaseProgress::finish(const std::string& note) {
  if (finished_) return;
  finished_ = true;
  const double seconds = out_.now() - began_;
  {
    const std::lock_guard<std::mutex> lock(active_mutex);
    clear_line();
    if (active == this) active = nullptr;
  }
  if (!out_.log) return;
  char took[32];
  std::snprintf(took, sizeof took, "%.1f", seconds);
  out_.log(phase_ + ": " + std::to_string(done_) + " " + items_ + " in " + took + " s" +
           (note.empty() ? "" : " (" + note + ")"));
}

std::shared_ptr<spdlog::sinks::sink> progress_clearing_sink(std::shared_ptr<spdlog::sinks::sink> inner) {
  return std::make_shared<ClearingSink>(std::move(inner));
}

void log_to_stderr() {
  // spdlog's own default logger writes to stdout, where `kbench run --format json > out.json`
  // would find its log lines among the records.
  auto logger = std::make_shared<spdlog::logger>(
      "", progress_clearing_sink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  logger->set_pattern("[%H:%M:%S] %^%l%$ %v");
  logger->set_level(spdlog::get_level());
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace kbench
