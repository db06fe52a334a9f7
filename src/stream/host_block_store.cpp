// stream/host_block_store.cpp — the host block cache and its blocks' registration
// (stream/host_block_store.hpp); the preload itself is in block_preload.cpp.
#include "stream/host_block_store.hpp"

#include <algorithm>

#include "common/thread_pool.hpp"
#include "plan/cost.hpp"
#include "stream/clock.hpp"

namespace tristream::stream {

// (The plan's host budget is the command's Budgets value; nothing is derived from the machine.)
std::uint64_t preload_spare(const Plan& plan) {
  if (!plan.host_budget) return 0;
  const std::uint64_t used = plan.host_bytes + plan.chunk_cache_bytes + plan.block_cache_bytes;
  return plan.host_budget > used ? plan.host_budget - used : 0;
}

bool HostBlockStore::uses_store(const Plan& plan) {
  return plan.block_cache_bytes > 0 && plan.partition.p > 1 &&
         plan.partition.scheme != Scheme::Vertex;
}

namespace {
// The row parts of `units` (every unit's when null) in the order the units first need them, and
// their bytes.
std::vector<std::uint32_t> preload_order(const Plan& plan, const std::vector<std::size_t>* units,
                                         std::uint64_t* bytes) {
  std::vector<std::uint32_t> order;
  std::vector<char> seen(plan.partition.p, 0);
  *bytes = 0;
  auto add = [&](const WorkUnit& w) {
    for (std::uint32_t a : {w.i, w.j})
      if (!seen[a]) {
        seen[a] = 1;
        order.push_back(a);
        *bytes += plan.row_part_bytes.at(a);
      }
  };
  if (units)
    for (std::size_t u : *units) add(plan.units.at(u));
  else
    for (const WorkUnit& w : plan.units) add(w);
  return order;
}
}  // namespace

bool HostBlockStore::would_preload(const Plan& plan, const std::vector<std::size_t>* units) {
  if (!uses_store(plan)) return false;
  if (!units) return plan.row_parts_bytes <= plan.block_cache_bytes;
  std::uint64_t bytes = 0;
  (void)preload_order(plan, units, &bytes);
  return bytes <= plan.block_cache_bytes;
}

HostBlockStore::HostBlockStore(const Plan& plan, BlockBuilder& builder, Recorder& rec,
                               HostRegistrar* registrar, std::uint64_t preload_spare)
    : plan_(plan),
      builder_(builder),
      reader_(builder.reader()),
      rec_(rec),
      registrar_(registrar),
      preload_spare_(preload_spare),
      threads_(builder.reader().pool().threads()),
      block_cap_(plan.block_cache_bytes),
      blocks_(plan.block_cache_bytes) {
  enabled_ = uses_store(plan);
}

HostBlockStore::~HostBlockStore() {
  stop_preload();
}

// Builds row part a's blocks G_ab into the cache. With `built`, the blocks are handed to the
// caller instead of being registered here (the preload's registrar pins them).
bool HostBlockStore::build_row_part(std::uint32_t a, const std::vector<BlockKey>& protect,
                                    std::int64_t unit, Recorder& rec, Made* built) {
  const Partition& P = plan_.partition;
  const std::uint32_t p = P.p;
  const std::uint64_t R = P.rows(a);
  // the blocks G_ab, b >= first (range: G_ab with b < a is empty and no unit needs it); pair:
  // only the whole rows R_a with global ids (the suffix block of column part code p), from which
  // the backend cuts each unit's A = G_ab (SlotBlock::cut)
  const bool pair = P.scheme == Scheme::Pair;
  const std::uint32_t first = plan_.partition.first_block(a);
  const std::uint32_t plain = pair ? 0 : p - first;
  const std::uint32_t q = pair ? 1 : plain;
  if (plan_.row_part_bytes.at(a) > block_cap_) return false;
  std::vector<std::uint64_t> needed;
  builder_.rows_needed(a, needed);
  std::vector<std::shared_ptr<HostBlock>> made(q);
  std::vector<BuildDest> dests(q);
  std::vector<std::uint32_t> parts(q);
  for (std::uint32_t d = 0; d < q; ++d) {
    parts[d] = d < plain ? first + d : P.suffix_block(0);
    made[d] = std::make_shared<HostBlock>();
  }
  const double tb = now_s();
  // (pair: the suffix block, the last, from the image when it holds the part's rows: then no
  // chunk is read)
  const bool view = q > plain && suffix_view(a, needed, *made[q - 1]);
  const std::uint32_t q_built = view ? q - 1 : q;
  if (q_built && !reader_.pin(needed, unit)) return false;
  if (q_built)
    builder_.build(a, parts.data(), q_built, dests.data(), [&](std::size_t d, eid_t edges) {
      HostBlock& hb = *made[d];
      hb.packed = dests[d].packed;
      hb.packed_rows = dests[d].nonempty;
      alloc_array(hb.off, hb.packed ? packed_bytes(hb.packed_rows) / sizeof(eid_t) : R + 1);
      alloc_array(hb.cols, edges);
      dests[d].off = hb.off.data();
      dests[d].cols = hb.cols.data();
      dests[d].cap = edges;
    });
  // Direct uploads: pin the blocks with columns here, on the pool and off the driver's path
  // (a unit's empty block is registered when the unit first needs it).
  const double tr = now_s();
  rec.span("build", unit, tb, tr, 0);
  if (built) {
    *built = made;
  } else if (direct_) {
    if (view) (void)register_part(a);  // (once; else the preload's registrar's)
    register_blocks(made, reader_.pool(), unit);
  }
  // insert, evicting the least recently used blocks the current unit does not need
  std::lock_guard<std::mutex> lk(bmu_);
  for (std::uint32_t d = 0; d < q; ++d) {
    const BlockKey key{a, parts[d]};
    blocks_.erase(key);
    const std::uint64_t add = made[d]->bytes();
    (void)blocks_.evict_for(add, [&](const BlockKey& k) {
      return std::find(protect.begin(), protect.end(), k) != protect.end();
    });
    blocks_.insert(key, made[d], add);
  }
  return true;
}

bool HostBlockStore::suffix_view(std::uint32_t a, const std::vector<std::uint64_t>& needed,
                                 HostBlock& hb) {
  if (!image_) return false;
  for (std::uint64_t c : needed)
    if (!image_->chunk_ready(c)) return false;
  const Partition& P = plan_.partition;
  const std::uint64_t r0 = P.bounds[a], R = P.rows(a);
  const eid_t* off = image_->offsets() + r0;  // (the image's offsets: global, from 0)
  const eid_t e0 = off[0];
  std::uint64_t nonempty = 0;
  for (std::uint64_t i = 0; i < R; ++i) nonempty += off[i + 1] > off[i] ? 1 : 0;
  hb.packed = packs(R, nonempty);
  hb.packed_rows = hb.packed ? nonempty : 0;
  if (hb.packed) {
    alloc_array(hb.off, packed_bytes(nonempty) / sizeof(eid_t));
    auto* image = reinterpret_cast<unsigned char*>(hb.off.data());
    vid_t* ids = packed_ids_at(image);
    eid_t* poff = packed_offsets_at(image, nonempty);
    std::uint64_t k = 0;
    for (std::uint64_t i = 0; i < R; ++i)
      if (off[i + 1] > off[i]) {
        ids[k] = static_cast<vid_t>(i);
        poff[k++] = off[i] - e0;
      }
    poff[nonempty] = off[R] - e0;
  } else {
    alloc_array(hb.off, R + 1);
    eid_t* o = hb.off.data();
    for (std::uint64_t i = 0; i <= R; ++i) o[i] = off[i] - e0;
  }
  hb.cols.view(image_->columns() + e0, off[R] - e0, &part_registered_[a]);
  return true;
}

// A block array in the arena while it has room, else in memory of its own.
template <class T>
void HostBlockStore::alloc_array(RawArray<T>& a, std::size_t n) {
  if (unsigned char* p = arena_.take(std::max<std::size_t>(n, 1) * sizeof(T)))
    a.view(reinterpret_cast<T*>(p), n, arena_.registered_flag());
  else
    a.alloc(n);
}

bool HostBlockStore::wait_for_views(const WorkUnit& w) {
  if (!image_ || !direct_) return false;
  auto registered = [&] { return part_registered(w.i) && part_registered(w.j); };
  if (registered()) return false;
  const double kernel_s = plan_internal::kernel_seconds(plan_, w);
  if (kernel_s * copy_bytes_per_s_ >= static_cast<double>(w.slot_bytes)) return false;
  // (the preload's registrar registers the parts in the order the units need them; a part it
  // did not get to, or whose registration failed, is uploaded from pageable memory)
  std::unique_lock<std::mutex> lk(bmu_);
  bcv_.wait(lk, [&] { return registered() || !preload_running_; });
  return true;
}

bool HostBlockStore::register_part(std::uint32_t a) {
  if (part_registered(a)) return true;
  const eid_t* off = image_->source_offsets();
  const Partition& P = plan_.partition;
  const eid_t e0 = off[P.bounds[a]], e1 = off[P.bounds[a + 1]];
  const double t0 = now_s();
  if (!image_->register_columns(*registrar_, e0, e1)) return false;
  rec_.span("register", -1, t0, now_s(), (e1 - e0) * sizeof(vid_t));
  {
    std::lock_guard<std::mutex> lk(bmu_);
    part_registered_[a].store(true, std::memory_order_release);
  }
  bcv_.notify_all();
  return true;
}

// The arena for the preloaded row parts' blocks with direct uploads (pair's views of the image
// take none of their columns' bytes), with room for each block's alignment.
void HostBlockStore::reserve_arena() {
  const std::uint64_t viewed = image_ ? image_->m() * sizeof(vid_t) : 0;
  (void)arena_.reserve(preload_bytes_ - std::min(viewed, preload_bytes_) +
                       2 * std::uint64_t{plan_.partition.p} * plan_.partition.p *
                           PinnedArena::kAlign);
}

// Registers the blocks with columns of a row part on `pool` (the trace's "register" span).
// `shared`: the driver may use them already (they register under reg_mu_).
void HostBlockStore::register_blocks(const Made& made, ThreadPool& pool, std::int64_t unit,
                                     bool shared) {
  const double t0 = now_s();
  pool.run(made.size(), [&](std::size_t d) {
    if (!made[d]->cols.size()) return;
    if (shared)
      (void)register_block(*made[d]);
    else
      (void)register_block_locked(*made[d]);  // (no one else has them yet)
  });
  rec_.span("register", unit, t0, now_s(), 0);
}

// Registers a cached block's arrays with the backend for direct uploads; true when both are.
// (Blocks in the arena only read its flag; the others register once, under reg_mu_, since
// several workers may lend the same block.)
bool HostBlockStore::register_block(HostBlock& hb) {
  std::lock_guard<std::mutex> lk(reg_mu_);
  return register_block_locked(hb);
}

bool HostBlockStore::register_block_locked(HostBlock& hb) {
  const bool off = hb.off.register_with(*registrar_);
  return off && (hb.cols.size() == 0 || hb.cols.register_with(*registrar_));
}

// The cached block G_ab, building row part a when missing; null when the cache cannot.
// While the background preload runs, waits for row part key.first (only the preload builds
// then); when the preload stopped short of it, joins the preload and builds it here. Misses
// build under build_mu_ and look again first: another worker may have built the row part.
std::shared_ptr<HostBlock> HostBlockStore::cached_block(BlockKey key,
                                                        const std::vector<BlockKey>& protect,
                                                        std::int64_t unit, Caller* caller) {
  Recorder& rec = caller ? caller->rec : rec_;
  auto find = [&]() -> std::shared_ptr<HostBlock> {
    std::lock_guard<std::mutex> lk(bmu_);
    if (auto* hit = blocks_.find(key)) return *hit;
    return nullptr;
  };
  bool preloading;
  {
    std::unique_lock<std::mutex> lk(bmu_);
    preloading = !part_ready_.empty();
    if (preloading && !part_ready_[key.first] && preload_running_) {
      const double w0 = now_s();
      bcv_.wait(lk, [&] { return part_ready_[key.first] || !preload_running_; });
      const double w1 = now_s();
      lk.unlock();
      rec.span("wait", unit, w0, w1, 0);
      if (caller) caller->waited_s += w1 - w0;
    }
  }
  if (auto hb = find()) return hb;
  if (preloading) finish_preload();  // (it stopped short of this row part: rethrows its failure)
  std::lock_guard<std::mutex> build(build_mu_);
  if (auto hb = find()) return hb;
  if (!build_row_part(key.first, protect, unit, rec)) return nullptr;
  return find();
}

// A cached block's arrays as copies to their places in the slot: the offsets region (dense,
// or the packed image, which `direct` leaves out: the backend uploads a packed block from
// UnitLayout::host_packed) and the columns. Marks the slot's block packed like the cached one.
void HostBlockStore::block_regions(const HostBlock& hb, SlotBlock& sb, bool direct,
                                   std::vector<DirectUpload>& out) {
  TS_CHECK(hb.cols.size() == sb.edges &&
               hb.off.size() * sizeof(eid_t) ==
                   (hb.packed ? packed_bytes(hb.packed_rows) : dense_offsets_bytes(sb.rows)),
           "a cached block differs from the census");
  sb.packed = hb.packed;
  sb.packed_rows = hb.packed_rows;
  if (!hb.packed || !direct)
    out.push_back({reinterpret_cast<const unsigned char*>(hb.off.data()), sb.offsets_at,
                   hb.off.size() * sizeof(eid_t)});
  if (hb.cols.size())
    out.push_back({reinterpret_cast<const unsigned char*>(hb.cols.data()), sb.cols_at,
                   hb.cols.size() * sizeof(vid_t)});
}

// Builds every row part's blocks when the block cache holds them all: one parallel
// pass over the graph (the counterpart of the in-core load), after which each unit only copies
// its blocks into its slot — or, with a backend that registers them (direct uploads), has them
// uploaded from where they are — so the steady state has no decompression or filtering at all.
// The pass runs on background threads, row part after row part in the order the units first
// need them, so the first units are counted while later row parts are built (a unit waits only
// for the row parts of its own blocks). It is a pipeline (background_preload): the chunks of
// the next batch of row parts are decompressed while the current batch is built, and the
// blocks built are pinned for direct uploads while the next row part is built. The chunk
// cache (plus the host budget's spare room) holds two batches; a chunk shared by two
// consecutive batches is decompressed once, and the first unit waits for one row part only.
void HostBlockStore::start_preload(int base_nice, const std::vector<std::size_t>* units) {
  base_nice_ = base_nice;
  if (!enabled_ || !would_preload(plan_, units)) {  // every block of every row part it serves
    if (on_preloaded_) on_preloaded_();
    return;
  }
  const Partition& P = plan_.partition;
  std::vector<std::uint32_t> order = preload_order(plan_, units, &preload_bytes_);
  part_ready_.assign(P.p, 0);
  direct_ = registrar_ != nullptr;
  preload_running_ = true;
  preload_thread_ = std::thread([this, order] { background_preload(order); });
}

// Waits for the background preload; rethrows its failure (a corrupt chunk).
void HostBlockStore::finish_preload() {
  std::lock_guard<std::mutex> lk(join_mu_);
  if (!preload_thread_.joinable()) return;
  preload_thread_.join();
  if (preload_error_) {
    std::exception_ptr e = preload_error_;
    preload_error_ = nullptr;
    std::rethrow_exception(e);
  }
}

// Stops the background preload after its current row part.
void HostBlockStore::stop_preload() {
  stop_ = true;
  std::lock_guard<std::mutex> lk(join_mu_);
  if (preload_thread_.joinable()) preload_thread_.join();
}

}  // namespace tristream::stream
