// IndexMap: a device's table from a 24-bit number it hands out in sequence (QP numbers, MR / MW key indices) to the
// object's handle, as a NIC's context tables are arrays indexed by that number (rxe_pool.c looks an index up in an
// xarray). Every packet looks up its destination QP and every key check its MR, so this replaces a hash map with
// one bounds check and one load. The numbers are allocated upwards from base and never reused, so the array is as
// long as the numbers handed out; a number from the wire outside it finds nothing.
#pragma once
#include <cstdint>
#include <vector>

namespace vl {

class IndexMap {
 public:
  explicit IndexMap(uint32_t base = 0) : base_(base) {}
  // the handle stored for i, or 0 (handles start at 1)
  uint32_t get(uint32_t i) const { const uint32_t k = i - base_; return i >= base_ && k < v_.size() ? v_[k] : 0; }
  size_t count(uint32_t i) const { return get(i) ? 1 : 0; }
  void set(uint32_t i, uint32_t h) {
    const uint32_t k = i - base_;
    if (k >= v_.size()) v_.resize(size_t(k) + 1, 0);
    v_[k] = h;
  }
  void erase(uint32_t i) { if (get(i)) v_[i - base_] = 0; }

 private:
  uint32_t base_;
  std::vector<uint32_t> v_;
};

}  // namespace vl
