// Nested BSDFs: collecting them, selecting between their samples, shifting component indices.
#include "bsdfs/nested.h"

#include <kiln/errors.h>

#include "core/parameter_checks.h"

namespace kiln::render {

std::vector<std::shared_ptr<BSDF>> nested_bsdfs(const Properties& props, size_t min_count, size_t max_count) {
  std::vector<std::shared_ptr<BSDF>> bsdfs;
  for (const auto& object : props.objects(PluginKind::Bsdf)) bsdfs.push_back(std::dynamic_pointer_cast<BSDF>(object));
  if (bsdfs.size() < min_count || bsdfs.size() > max_count) {
    std::string expected = min_count == max_count ? "exactly " + std::to_string(min_count)
                                                  : std::to_string(min_count) + " or " + std::to_string(max_count);
    throw_plugin_error(props, "takes " + expected + " nested BSDFs, got " + std::to_string(bsdfs.size()));
  }
  for (const auto& bsdf : bsdfs)
    if (!bsdf)
      throw InternalError("kiln.render: " + describe_plugin(props.kind(), props.plugin(), props.id(), props.source()) +
                          ": a nested object of kind bsdf is not a BSDF");
  return bsdfs;
}

BSDFSample3f select(const Bool& mask, const BSDFSample3f& a, const BSDFSample3f& b) {
  return {select(mask, a.wo, b.wo), select(mask, a.pdf, b.pdf), select(mask, a.eta, b.eta),
          select(mask, a.sampled_type, b.sampled_type), select(mask, a.sampled_component, b.sampled_component)};
}

BSDFSample3f no_sample() { return {Array3f(0.0f, 0.0f, 0.0f), Float(0.0f), Float(1.0f), UInt32(0u), UInt32(0u)}; }

BSDFContext nested_context(const BSDFContext& ctx, size_t offset) {
  BSDFContext nested = ctx;
  if (ctx.component != ~0u) nested.component -= uint32_t(offset);
  return nested;
}

}  // namespace kiln::render
