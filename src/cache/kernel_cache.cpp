// The kernel cache driver (see kernel_cache.h): memory, disk, generalization, reasons.
#include "cache/kernel_cache.h"

#include "cache/compile_reason.h"
#include "cache/disk_cache.h"
#include "cache/generalize.h"
#include "cache/kernel_key.h"
#include "util/build_id.h"
#include "util/settings.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

namespace kiln::detail {
namespace {

/// A backend's code generation as it enters kernel identity and disk entries.
struct BackendIdentity {
  Hash128 hash;
  DiskTarget target;
};

struct MemoryEntry {
  std::shared_ptr<const Kernel> kernel;
  std::shared_ptr<const LaunchListing> listing;  ///< of the launch that compiled or loaded it
};

struct Cache {
  std::mutex mutex;
  std::unordered_map<Hash128, MemoryEntry, Hash128Hasher> kernels;
  std::unordered_map<Hash128, ShapeRecord, Hash128Hasher> shapes;
  std::unordered_map<const Backend*, BackendIdentity> backends;
  CompiledShapes compiled;
  size_t memory_hits = 0, disk_hits = 0, compiles = 0, generalizations = 0;
};
Cache& cache() {
  static Cache* instance = new Cache();  // kernels may be released after main()
  return *instance;
}

const BackendIdentity& identity_of(Cache& c, const Backend& backend) {
  auto it = c.backends.find(&backend);
  if (it != c.backends.end()) return it->second;
  BackendIdentity id;
  id.target = {backend.compiler(), backend.cpu()};
  std::string text = std::string(backend.name()) + "\n" + id.target.compiler + "\n" + id.target.cpu + "\n" + build_id();
  id.hash = hash128_bytes(text.data(), text.size());
  return c.backends.emplace(&backend, std::move(id)).first->second;
}

std::string symbol_for(const Hash128& key) { return "kiln_" + key.hex(); }

/// The parameter slots of a shape as stored on disk: one byte per slot.
void load_disk_parameters(ShapeRecord& record, const KernelShape& shape, const DiskTarget& target) {
  auto payload = disk_cache().load(DiskEntryKind::Shape, shape.hash, target);
  if (payload && payload->size() == shape.slots.positions.size())
    record.parameters.assign(payload->begin(), payload->end());
}

/// Everything about one lookup: the form, its shape, and what the caller needs back.
class Lookup {
 public:
  Lookup(Cache& cache, Backend& backend, const KernelForm& form, const StatementNoteSource& notes)
      : cache_(cache),
        backend_(backend),
        form_(form),
        notes_(notes),
        identity_(identity_of(cache, backend)),
        shape_(kernel_shape(form, identity_.hash)),
        disk_(flag(Flag::DiskCache) && backend.has_object_code() && disk_cache().enabled()),
        generalize_(flag(Flag::Generalize)) {}

  CachedKernel run() {
    auto [it, first_sight] = cache_.shapes.try_emplace(shape_.hash);
    ShapeRecord& record = it->second;
    if (first_sight && disk_ && generalize_) load_disk_parameters(record, shape_, identity_.target);

    // The specialized kernel first (best code), then the shape's generic one.
    std::vector<Candidate> candidates{candidate(shape_.slots.opaque)};
    if (generalize_ && !record.parameters.empty()) {
      ParameterMask generic = mask_union(record.parameters, shape_.slots.opaque);
      if (generic != shape_.slots.opaque) candidates.push_back(candidate(generic));
    }
    for (const Candidate& c : candidates)
      if (std::optional<CachedKernel> hit = from_memory(c)) return seen(record, std::move(*hit));
    if (disk_)
      for (const Candidate& c : candidates)
        if (std::optional<CachedKernel> hit = from_disk(c)) return seen(record, std::move(*hit));

    CompilePlan plan = plan_compilation(record, shape_, generalize_, generalization_threshold());
    Candidate planned = candidate(plan.mask);
    bool new_mask =
        std::none_of(candidates.begin(), candidates.end(), [&](const Candidate& c) { return c.key == planned.key; });
    // The planned kernel may exist already: compiled for a launch in which these slots
    // were opaque(), in this process, or by another process.
    if (new_mask) {
      if (std::optional<CachedKernel> hit = from_memory(planned)) return std::move(*hit);
      if (disk_)
        if (std::optional<CachedKernel> hit = from_disk(planned)) {
          if (plan.generalized) store_parameters(record);  // the disk had no (valid) shape record
          return std::move(*hit);
        }
    }
    return compile(plan, planned);
  }

 private:
  /// A kernel that may serve the launch: its parameter slots and its key.
  struct Candidate {
    ParameterMask mask;
    Hash128 key;
  };
  Candidate candidate(ParameterMask mask) const {
    Hash128 key = kernel_key(shape_, mask);
    return {std::move(mask), key};
  }

  CachedKernel result(const Candidate& c, const MemoryEntry& entry, KernelSource source) {
    CachedKernel k;
    k.kernel = entry.kernel;
    k.listing = entry.listing->labelled || notes_.labels_live ? listing(entry.listing->form) : entry.listing;
    k.source = source;
    k.key = c.key;
    k.shape = shape_.hash;
    k.parameters = parameter_block(shape_, c.mask);
    return k;
  }

  /// A hit makes its variant known, so that the next miss is compared against it.
  CachedKernel seen(ShapeRecord& record, CachedKernel hit) {
    if (record.variants == 0) {
      record.reference = record.last = shape_.slots.values;
      record.varied.assign(shape_.slots.positions.size(), 0);
      record.variants = 1;
    }
    return hit;
  }

  std::optional<CachedKernel> from_memory(const Candidate& c) {
    auto it = cache_.kernels.find(c.key);
    if (it == cache_.kernels.end()) return std::nullopt;
    cache_.memory_hits++;
    return result(c, it->second, KernelSource::Memory);
  }

  std::optional<CachedKernel> from_disk(const Candidate& c) {
    const Hash128& key = c.key;
    auto object = disk_cache().load(DiskEntryKind::Kernel, key, identity_.target);
    if (!object) return std::nullopt;
    MemoryEntry entry;
    try {
      entry.kernel = backend_.load(*object, symbol_for(key));
    } catch (const std::exception& e) {
      log(LogLevel::Warn, "disk cache entry " + disk_cache().entry_path(DiskEntryKind::Kernel, key) +
                              " could not be loaded (" + e.what() + "); recompiling it");
      return std::nullopt;
    }
    entry.listing = listing(std::make_shared<const KernelForm>(generic_form(form_, shape_, c.mask)));
    cache_.kernels[key] = entry;
    cache_.disk_hits++;
    return result(c, entry, KernelSource::Disk);
  }

  /// Records on disk which slots of the shape are parameters, for other processes.
  void store_parameters(const ShapeRecord& record) {
    disk_cache().store(DiskEntryKind::Shape, shape_.hash, identity_.target, record.parameters);
  }

  /// The form with the notes of this launch's statements.
  std::shared_ptr<const LaunchListing> listing(std::shared_ptr<const KernelForm> form) const {
    auto result = std::make_shared<LaunchListing>(LaunchListing{std::move(form), notes_.gather(), false});
    for (const StatementNote& note : result->notes) result->labelled |= !note.label.empty();
    return result;
  }

  CachedKernel compile(const CompilePlan& plan, const Candidate& planned) {
    const Hash128& key = planned.key;
    auto compiled = listing(std::make_shared<const KernelForm>(generic_form(form_, shape_, plan.mask)));
    std::string why = reason(plan, compiled->notes);  // before this kernel joins the compiled ones
    if (log_enabled(LogLevel::Debug))
      log(LogLevel::Debug, "lowering " + symbol_for(key) + ", after generalization (" +
                               std::to_string(std::count(plan.mask.begin(), plan.mask.end(), 1)) + " of " +
                               std::to_string(shape_.slots.positions.size()) + " literal slots are parameters):\n" +
                               print_kernel_form(*compiled->form, compiled->notes));
    std::vector<uint8_t> object;
    CompileTimes times;
    MemoryEntry entry{backend_.compile(*compiled->form, symbol_for(key), times, object), compiled};
    cache_.kernels[key] = entry;
    cache_.compiled.add(key, compiled->form);
    cache_.compiles++;
    cache_.generalizations += plan.generalized;
    if (disk_) {
      disk_cache().store(DiskEntryKind::Kernel, key, identity_.target, object);
      if (plan.generalized) store_parameters(cache_.shapes.at(shape_.hash));
    }
    CachedKernel k = result(planned, entry, plan.generalized ? KernelSource::Generalized : KernelSource::Compiled);
    k.times = times;
    k.reason = std::move(why);
    return k;
  }

  std::string reason(const CompilePlan& plan, const StatementNotes& notes) const {
    size_t slots = shape_.slots.positions.size();
    if (plan.first_variant && plan.generalized)
      return "first time this kernel shape was seen; generalization threshold 1: all " + std::to_string(slots) +
             " literal slots are parameters";
    if (plan.first_variant) return cache_.compiled.explain_new_shape(form_, notes);
    if (plan.changed.empty()) return "these literal values were compiled before, under other generalization settings";
    std::string changes = describe_literal_changes(form_, shape_, plan.changed, plan.old_values, notes);
    if (plan.generalized) {
      size_t count = plan.new_parameters;
      return changes + " \u2014 generalized " + std::to_string(count) + " slot" + (count > 1 ? "s" : "") + " (" +
             std::to_string(mask_count(plan.mask)) + " of " + std::to_string(slots) + " literals are parameters)";
    }
    if (!generalize_) return changes + " (generalization is off)";
    return changes + " (variant " + std::to_string(cache_.shapes.at(shape_.hash).variants) +
           " of this shape; literals that vary become parameters at variant " +
           std::to_string(generalization_threshold()) + ")";
  }

  Cache& cache_;
  Backend& backend_;
  const KernelForm& form_;
  const StatementNoteSource& notes_;
  const BackendIdentity& identity_;
  KernelShape shape_;
  bool disk_, generalize_;
};

}  // namespace

CachedKernel find_or_compile(Backend& backend, const KernelForm& form, const StatementNoteSource& notes) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return Lookup(c, backend, form, notes).run();
}

}  // namespace kiln::detail

namespace kiln {

const char* source_name(KernelSource source) {
  switch (source) {
    case KernelSource::Compiled: return "compiled";
    case KernelSource::Generalized: return "generalized";
    case KernelSource::Memory: return "memory";
    case KernelSource::Disk: return "disk";
    case KernelSource::Library: return "library";
  }
  return "?";
}

CacheStats cache_stats() {
  detail::Cache& c = detail::cache();
  CacheStats stats;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    stats.memory_hits = c.memory_hits;
    stats.disk_hits = c.disk_hits;
    stats.compiles = c.compiles;
    stats.generalizations = c.generalizations;
    stats.kernels = c.kernels.size();
  }
  if (!flag(Flag::DiskCache)) {  // never touch the directory then
    stats.disk_problem = "turned off (the DiskCache flag, KILN_DISK_CACHE=0)";
    return stats;
  }
  detail::DiskCache& disk = detail::disk_cache();
  stats.disk_enabled = disk.enabled();
  stats.disk_problem = disk.problem();
  stats.disk_bytes = stats.disk_enabled ? disk.bytes() : 0;
  return stats;
}

void flush_kernel_cache() {
  detail::Cache& c = detail::cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.kernels.clear();
  c.shapes.clear();
  c.compiled = {};
}

}  // namespace kiln
