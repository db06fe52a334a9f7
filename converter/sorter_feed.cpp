// sorter_feed.cpp — the parsed blocks' keys on their way to an EdgeSorter (sorter_feed.hpp).
#include "sorter_feed.hpp"

#include <algorithm>
#include <utility>

#include "util.hpp"

namespace tristream::conv {

SorterFeed::SorterFeed(EdgeSorter* sorter, unsigned threads, std::uint64_t early_bytes, Hold hold)
    : sorter_(sorter),
      threads_(std::max(threads, 1u)),
      early_bytes_(early_bytes),
      hold_(std::move(hold)) {}

SorterFeed::~SorterFeed() {
  if (flush_.valid()) flush_.wait();
}

std::function<void(Block&)> SorterFeed::parsed_hook() const {
  EdgeSorter* const s = sorter_;
  if (!s) return {};
  return [s](Block& b) {
    if (b.wide || b.keys.size() == 0) return;
    if (!s->ready()) {
      b.device_later = true;
      return;
    }
    if (!s->append(b.keys.data(), b.keys.size())) return;
    b.device_keys = b.keys.size();
    b.on_device = true;
    give_back_keys(b.keys);  // the next block of this worker writes its keys there
  };
}

bool SorterFeed::take(Block& b) {
  // 1. Keys the sorter has: counted while it holds them (once taken back, here already).
  if (b.on_device) {
    if (sorter_) records_ += b.device_keys;
    return true;
  }
  if (!sorter_ || b.size() == 0) return false;
  // 2. Parsed while the sorter started: kept, flushed once it is ready (or once too many wait);
  //    once it is ready and the kept blocks are on their way, late ones go at once.
  if (b.device_later) {
    b.keys.trim();
    if (!sorter_->ready() || !early_.empty()) {
      early_records_ += b.size();
      early_.push_back(std::make_unique<Block>(std::move(b)));
      if (sorter_->ready() || early_records_ * 8 > early_bytes_) start_flush();
      return true;
    }
    if (sorter_->append(b.keys.data(), b.keys.size())) {
      records_ += b.size();
      return true;
    }
  }
  // 3. A wide block, or the sorter full: the host's way from now on.
  take_back();
  return false;
}

bool SorterFeed::finish() {
  if (!sorter_) return false;
  if (!early_.empty()) start_flush();
  if (!sorter_) return false;
  std::vector<std::unique_ptr<Block>> left = join_flush();
  if (!left.empty()) {
    take_back(std::move(left));
    return false;
  }
  sorter_->close();
  return true;
}

void SorterFeed::take_back() {
  take_back({});
}

void SorterFeed::start_flush() {
  std::vector<std::unique_ptr<Block>> left = join_flush();
  if (!left.empty()) {  // (the sorter is full: the blocks stay on the host)
    take_back(std::move(left));
    return;
  }
  auto blocks = std::make_shared<std::vector<std::unique_ptr<Block>>>(std::move(early_));
  early_.clear();
  early_records_ = 0;
  EdgeSorter* const s = sorter_;
  const unsigned t = std::max(1u, threads_ / 4);
  flush_ = std::async(std::launch::async, [s, t, blocks] {
    std::vector<char> taken(blocks->size(), 0);
    parallel_for(t, blocks->size(), 1, [&](std::size_t lo, std::size_t hi, unsigned) {
      for (std::size_t i = lo; i < hi; ++i)
        taken[i] = s->append((*blocks)[i]->keys.data(), (*blocks)[i]->keys.size());
    });
    Flushed f;
    for (std::size_t i = 0; i < blocks->size(); ++i) {
      if (taken[i])
        f.appended += (*blocks)[i]->size();
      else
        f.left.push_back(std::move((*blocks)[i]));
    }
    return f;
  });
}

std::vector<std::unique_ptr<Block>> SorterFeed::join_flush() {
  if (!flush_.valid()) return {};
  Flushed f = flush_.get();
  records_ += f.appended;
  return std::move(f.left);
}

void SorterFeed::take_back(std::vector<std::unique_ptr<Block>> extra) {
  std::vector<std::unique_ptr<Block>> left = join_flush();
  EdgeSorter* const s = std::exchange(sorter_, nullptr);
  if (s) {
    s->close();
    const std::uint64_t total = s->size();
    constexpr std::uint64_t kPiece = std::uint64_t{1} << 24;
    for (std::uint64_t i = 0; i < total; i += kPiece) {
      auto b = std::make_unique<Block>();
      const std::size_t k = static_cast<std::size_t>(std::min(kPiece, total - i));
      b->keys.reserve(k);
      b->keys.resize(k);
      s->take_back(i, k, b->keys.data());
      hold_(std::move(b));
    }
  }
  records_ = 0;
  // (and the blocks kept while it started, or that a flush of them left)
  std::vector<std::unique_ptr<Block>> early = std::move(early_);
  early_.clear();
  early_records_ = 0;
  for (auto* list : {&early, &left, &extra})
    for (auto& b : *list) hold_(std::move(b));
}

}  // namespace tristream::conv
