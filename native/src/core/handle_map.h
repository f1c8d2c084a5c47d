// HandleMap<T>: the session's object tables. Handles are small session-wide sequential integers, so a vector
// indexed by handle replaces a hash map (the lookups are on every packet). Elements have stable addresses.
// Interface: the subset of std::unordered_map the device uses (find/end/emplace/erase/count/[]/iteration).
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

namespace vl {

template <class T> class HandleMap {
 public:
  using value_type = std::pair<const uint32_t, T>;
  class iterator {
   public:
    iterator(std::vector<std::unique_ptr<value_type>>* v, size_t i) : v_(v), i_(i) { skip(); }
    value_type& operator*() const { return *(*v_)[i_]; }
    value_type* operator->() const { return (*v_)[i_].get(); }
    iterator& operator++() { i_++; skip(); return *this; }
    bool operator==(const iterator& o) const { return i_ == o.i_; }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }
   private:
    void skip() { while (i_ < v_->size() && !(*v_)[i_]) i_++; }
    std::vector<std::unique_ptr<value_type>>* v_;
    size_t i_;
  };
  iterator begin() { return iterator(&v_, 0); }
  iterator end() { return iterator(&v_, v_.size()); }
  iterator find(uint32_t h) { return h < v_.size() && v_[h] ? iterator(&v_, h) : end(); }
  size_t count(uint32_t h) const { return h < v_.size() && v_[h] ? 1 : 0; }
  T* get(uint32_t h) { return h < v_.size() && v_[h] ? &v_[h]->second : nullptr; }   // the lookup on every packet
  size_t size() const { return n_; }
  template <class U> std::pair<iterator, bool> emplace(uint32_t h, U&& x) {
    if (h >= v_.size()) v_.resize(size_t(h) + 1);
    if (v_[h]) return {iterator(&v_, h), false};
    v_[h] = std::make_unique<value_type>(h, std::forward<U>(x));
    n_++;
    return {iterator(&v_, h), true};
  }
  size_t erase(uint32_t h) {
    if (!count(h)) return 0;
    v_[h].reset();
    n_--;
    return 1;
  }
  T& operator[](uint32_t h) {
    if (!count(h)) emplace(h, T{});
    return v_[h]->second;
  }
  T& at(uint32_t h) { if (!count(h)) throw std::out_of_range("HandleMap::at"); return v_[h]->second; }
  const T& at(uint32_t h) const { if (!count(h)) throw std::out_of_range("HandleMap::at"); return v_[h]->second; }

 private:
  std::vector<std::unique_ptr<value_type>> v_;
  size_t n_ = 0;
};

}  // namespace vl
