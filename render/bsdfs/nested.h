// What the BSDFs that wrap other BSDFs share (twosided, blendbsdf): collecting the nested
// BSDFs from the parameters, picking between two samples lane by lane, and addressing a
// nested BSDF's components by their index in the wrapper's list.
#pragma once

#include <kiln/render/bsdf.h>

#include <memory>
#include <vector>

namespace kiln::render {

/// The BSDFs nested in `props`, in declaration order; a ValueError naming the plugin unless
/// there are at least `min_count` and at most `max_count`.
std::vector<std::shared_ptr<BSDF>> nested_bsdfs(const Properties& props, size_t min_count, size_t max_count);

/// `a` on `mask` lanes, `b` elsewhere, field by field.
BSDFSample3f select(const Bool& mask, const BSDFSample3f& a, const BSDFSample3f& b);

/// A sample that scatters nowhere (zero direction and pdf), for lanes nothing sampled.
BSDFSample3f no_sample();

/// `ctx` as seen by a nested BSDF whose components follow `offset` others in the wrapper's
/// list (a selected component index moves down by `offset`; "all" stays all).
BSDFContext nested_context(const BSDFContext& ctx, size_t offset);

}  // namespace kiln::render
