// Ring<T>: a queue in one power-of-two array, the layout of a NIC's work and completion queues (rxe_queue.h: a
// producer and a consumer index into 2^n slots). It replaces std::deque for the send / receive queues, the CQs and
// the engine's FIFO of deliveries: a deque allocates a node every few pushes (one per push for elements as large as
// a send WQE) and frees it when the front moves past, so every posted WR and every packet cost a malloc / free pair.
//
// Slots stay constructed: pop_front() leaves the element where it was, and the next push into that slot assigns
// over it, so the vectors an element owns (a WQE's SGE list) keep their storage from one use of the slot to the
// next. The API is the subset of std::deque the device uses; indices are from the front (0 = oldest).
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

namespace vl {

template <class T>
class Ring {
 public:
  Ring() = default;

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](size_t i) { return slots_[(head_ + i) & mask_]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & mask_]; }
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  T& back() { return (*this)[n_ - 1]; }
  const T& back() const { return (*this)[n_ - 1]; }

  // The slot the next push_back fills, without making it part of the queue: a caller that builds an element in
  // place and may still refuse it (post_send's checks) writes here, then commit_back().
  T& next_back() { grow_if_full(); return (*this)[n_]; }
  void commit_back() { n_++; }

  // (v may be an element of this ring, as with std::deque: it is copied out before the ring grows)
  void push_back(const T& v) {
    if (n_ == slots_.size()) { T keep = v; next_back() = std::move(keep); } else next_back() = v;
    n_++;
  }
  void push_back(T&& v) {
    if (n_ == slots_.size()) { T keep = std::move(v); next_back() = std::move(keep); } else next_back() = std::move(v);
    n_++;
  }
  template <class... A> T& emplace_back(A&&... a) { T s(std::forward<A>(a)...); push_back(std::move(s)); return back(); }
  void push_front(const T& v) {
    T keep = v;
    grow_if_full();
    head_ = (head_ - 1) & mask_;
    slots_[head_] = std::move(keep);
    n_++;
  }
  void pop_front() { head_ = (head_ + 1) & mask_; n_--; }
  void pop_back() { n_--; }
  void clear() { head_ = 0; n_ = 0; }

  template <class R, class Q>
  class Iter {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = R*;
    using reference = R&;
    Iter(Q* r, size_t i) : r_(r), i_(i) {}
    R& operator*() const { return (*r_)[i_]; }
    R* operator->() const { return &(*r_)[i_]; }
    Iter& operator++() { i_++; return *this; }
    Iter operator++(int) { Iter t = *this; i_++; return t; }
    Iter& operator--() { i_--; return *this; }
    Iter& operator+=(difference_type d) { i_ += d; return *this; }
    Iter operator+(difference_type d) const { return Iter(r_, i_ + d); }
    Iter operator-(difference_type d) const { return Iter(r_, i_ - d); }
    difference_type operator-(const Iter& o) const { return difference_type(i_) - difference_type(o.i_); }
    R& operator[](difference_type d) const { return (*r_)[i_ + d]; }
    bool operator==(const Iter& o) const { return i_ == o.i_; }
    bool operator!=(const Iter& o) const { return i_ != o.i_; }
    bool operator<(const Iter& o) const { return i_ < o.i_; }

   private:
    Q* r_;
    size_t i_;
  };
  using iterator = Iter<T, Ring>;
  using const_iterator = Iter<const T, const Ring>;
  iterator begin() { return iterator(this, 0); }
  iterator end() { return iterator(this, n_); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, n_); }

 private:
  void grow_if_full() {
    if (n_ < slots_.size()) return;
    // double, moving the live elements to the front of the new array in queue order; the old array's stale
    // elements go with it
    std::vector<T> bigger(slots_.empty() ? 16 : slots_.size() * 2);
    for (size_t i = 0; i < n_; i++) bigger[i] = std::move((*this)[i]);
    slots_.swap(bigger);
    head_ = 0;
    mask_ = slots_.size() - 1;
  }

  std::vector<T> slots_;
  size_t head_ = 0, n_ = 0, mask_ = 0;
};

}  // namespace vl
