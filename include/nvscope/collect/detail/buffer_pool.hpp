// nvscope-target: nvscope
#pragma once

// The collector's fixed pool of activity buffers. CUPTI asks for a buffer whenever it needs
// one; the pool hands out at most `count` buffers of `size` bytes, all allocated up front, so
// that memory stays bounded however long a run is. When every buffer is out (CUPTI filled them
// faster than they were decoded), the request is refused and CUPTI counts the records it then
// drops; the pool counts the refusals so that the summary can say "buffers exhausted".

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

class buffer_pool {
 public:
  // CUPTI wants 8-byte aligned buffers; sizes are rounded up to a multiple of 8.
  static constexpr std::size_t alignment = 8;
  static constexpr std::size_t min_size = 1024;

  buffer_pool() = default;
  buffer_pool(const buffer_pool&) = delete;
  buffer_pool& operator=(const buffer_pool&) = delete;
  ~buffer_pool() { release_all(); }

  // Allocates `count` buffers of `size` bytes, counts from zero again. False (and nothing
  // held) when memory is short.
  bool reserve(std::size_t size, std::size_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_storage();
    refusals_ = 0;
    foreign_ = 0;
    size_ = size < min_size ? min_size : (size + alignment - 1) / alignment * alignment;
    for (std::size_t i = 0; i < count; ++i) {
      void* p = std::aligned_alloc(alignment, size_);
      if (p == nullptr) {
        free_storage();
        return false;
      }
      storage_.push_back(static_cast<std::uint8_t*>(p));
      free_.push_back(storage_.back());
    }
    return true;
  }

  // A free buffer, or nullptr when all are out (counted in `refusals()`).
  std::uint8_t* acquire() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) {
      ++refusals_;
      return nullptr;
    }
    std::uint8_t* p = free_.back();
    free_.pop_back();
    if (storage_.size() - free_.size() > high_water_) high_water_ = storage_.size() - free_.size();
    return p;
  }

  // Gives a buffer back. A pointer the pool never handed out is ignored and counted.
  void release(std::uint8_t* p) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    bool ours = false;
    for (std::uint8_t* s : storage_) ours = ours || s == p;
    bool already_free = false;
    for (std::uint8_t* f : free_) already_free = already_free || f == p;
    if (!ours || already_free) {
      ++foreign_;
      return;
    }
    free_.push_back(p);
  }

  // Frees every buffer (the collector calls this only once CUPTI holds none).
  void release_all() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    free_storage();
  }

  std::size_t buffer_size() const noexcept { return size_; }
  std::size_t capacity() const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    return storage_.size();
  }
  std::size_t in_use() const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    return storage_.size() - free_.size();
  }
  std::size_t high_water() const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    return high_water_;
  }
  std::uint64_t refusals() const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    return refusals_;
  }
  std::uint64_t foreign_releases() const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    return foreign_;
  }

 private:
  void free_storage() noexcept {
    for (std::uint8_t* p : storage_) std::free(p);
    storage_.clear();
    free_.clear();
    high_water_ = 0;
  }

  mutable std::mutex mutex_;
  std::size_t size_ = 0;
  std::vector<std::uint8_t*> storage_;
  std::vector<std::uint8_t*> free_;
  std::size_t high_water_ = 0;
  std::uint64_t refusals_ = 0;
  std::uint64_t foreign_ = 0;
};

} // namespace detail
} // namespace v1
} // namespace nvscope
