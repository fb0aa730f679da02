#include "harness/cupti_timer.hpp"

#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/errors.hpp"
#include "harness/host_gate.hpp"

namespace kbench {

double sample_span_us(const std::vector<GpuSpan>& spans,
                      const std::vector<std::pair<std::uint32_t, std::uint64_t>>& external,
                      std::uint64_t sample) {
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max(), last = 0;
  bool any = false;
  for (const GpuSpan& s : spans) {
    const bool ours = std::any_of(external.begin(), external.end(), [&](const auto& e) {
      return e.first == s.correlation && e.second == sample;
    });
    if (!ours) continue;
    any = true;
    first = std::min(first, s.start_ns);
    last = std::max(last, s.end_ns);
  }
  return any && last >= first ? static_cast<double>(last - first) * 1e-3 : -1.0;
}

namespace {

void check_cupti(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  throw std::runtime_error(std::string("cupti timer: ") + call + " failed: " + (text ? text : "unknown error"));
}
#define KB_CUPTI(call) check_cupti((call), #call)

// The activity kinds one sample records: the work (kernels, copies, fills), the API calls that
// issue it, and the external correlation records that tie those calls to the sample.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER,  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

// What CUPTI's buffers delivered since the last take(). CUPTI calls the completion callback
// from its own thread or from inside cuptiActivityFlushAll, hence the lock.
class Collector {
 public:
  static Collector& instance() {
    static Collector c;
    return c;
  }
  void add(CUpti_Activity* rec) {
    std::lock_guard<std::mutex> lock(m_);
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
        spans_.push_back({k->correlationId, k->start, k->end});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
        spans_.push_back({m->correlationId, m->start, m->end});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
        spans_.push_back({m->correlationId, m->start, m->end});
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
        external_.emplace_back(e->correlationId, e->externalId);
        break;
      }
      default:
        break;  // API records: needed for the correlation records to exist, not read
    }
  }
  void add_dropped(std::size_t n) {
    std::lock_guard<std::mutex> lock(m_);
    dropped_ += n;
  }
  // The span of `sample` from everything delivered so far; clears the store.
  double take(std::uint64_t sample, std::size_t* dropped) {
    std::lock_guard<std::mutex> lock(m_);
    const double us = sample_span_us(spans_, external_, sample);
    *dropped = dropped_;
    spans_.clear();
    external_.clear();
    dropped_ = 0;
    return us;
  }

 private:
  std::mutex m_;
  std::vector<GpuSpan> spans_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> external_;
  std::size_t dropped_ = 0;
};

constexpr std::size_t kBufferBytes = std::size_t{1} << 20;  // thousands of records; a sample makes a few

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));  // CUPTI wants 8-byte alignment
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  Collector& c = Collector::instance();
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) c.add(rec);
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) c.add_dropped(dropped);
  std::free(buffer);
}

// The callbacks are registered once per process, on the first cupti timer.
void register_buffers() {
  static const bool done = [] {
    KB_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    return true;
  }();
  (void)done;
}

// Collection on for one sample's lifetime; off again (and the records flushed) when it ends,
// whether the sample finished or threw.
class Recording {
 public:
  Recording() {
    for (const CUpti_ActivityKind k : kKinds) {
      try {
        KB_CUPTI(cuptiActivityEnable(k));
      } catch (...) {
        disable();
        throw;
      }
      ++enabled_;
    }
  }
  ~Recording() { disable(); }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

 private:
  void disable() {
    for (int i = 0; i < enabled_; ++i) cuptiActivityDisable(kKinds[i]);
    enabled_ = 0;
  }
  int enabled_ = 0;
};

class CuptiTimer final : public GatedLaunchTimer {
 public:
  CuptiTimer(SetLauncher launch, const DeviceSet& set, const L2Flusher* flusher, cudaStream_t s)
      : GatedLaunchTimer(std::move(launch), set, flusher, s) {
    register_buffers();
  }
  static HostGate& gate() { return shared_host_gate(); }
  double sample_us() override {
    prime_once();
    KB_CUDA(cudaStreamSynchronize(stream_));
    const std::uint64_t id = next_sample_id()++;
    {
      Recording on;
      gate().hold(stream_);
      bool pushed = false;
      try {
        if (flusher_) flusher_->flush(stream_);
        KB_CUPTI(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id));
        pushed = true;
        launch_(set_, stream_);
      } catch (...) {
        if (pushed) cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, nullptr);
        gate().release();
        throw;
      }
      std::uint64_t popped = 0;
      KB_CUPTI(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped));
      gate().release();
      KB_CUDA(cudaStreamSynchronize(stream_));
    }
    if (!gate().released_in_time())
      throw std::runtime_error("cupti timer: the host gate timed out (enqueueing one sample took over a second)");
    KB_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    std::size_t dropped = 0;
    const double us = Collector::instance().take(id, &dropped);
    if (dropped > 0)
      throw std::runtime_error("cupti timer: CUPTI dropped " + std::to_string(dropped) + " activity records");
    if (us < 0) throw std::runtime_error("cupti timer: the launch left no kernel, memcpy or memset record");
    return us;
  }
  std::string note() const override {
    return std::string("one launch behind a host-released gate") + (flusher_ ? " and an L2 flush" : ", L2 warm") +
           "; CUPTI activity records, first start to last end of the GPU work it issued (kernel time, no "
           "launch overhead)";
  }

 private:
  // Ids unique across the timers of the process (the collector is shared).
  static std::atomic<std::uint64_t>& next_sample_id() {
    static std::atomic<std::uint64_t> id{1};
    return id;
  }
};

}  // namespace

std::unique_ptr<Timer> make_cupti_timer(SetLauncher launch, const DeviceSet& set, const L2Flusher* flusher,
                                        cudaStream_t stream) {
  return std::make_unique<CuptiTimer>(std::move(launch), set, flusher, stream);
}

}  // namespace kbench
