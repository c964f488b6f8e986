// Pieces the path, prb, ptracer, direct and aov integrators share: parameters, the MIS
// weight, derivatives relative to a value, the area form of a BSDF sample's derivatives, 2D
// samples, and looking through emitters the camera must not see.
#pragma once

#include <kiln/random.h>
#include <kiln/render/bsdf.h>
#include <kiln/render/interaction.h>
#include <kiln/render/properties.h>
#include <kiln/render/ray.h>

namespace kiln::render {

class Scene;

/// `max_depth` (-1, meaning unbounded, by default) as a vertex count; other negatives are errors.
uint32_t max_depth_parameter(const Properties& props);

/// `rr_depth` (5 by default): the path length from which Russian roulette runs; positive.
uint32_t rr_depth_parameter(const Properties& props);

/// The power heuristic a² / (a² + b²) for densities a and b (0 where it is not finite).
/// Its derivatives are 0: weights are a sampling choice, and any weights summing to one
/// keep the estimator (and its derivative) unbiased; this also keeps the 0/0 of two zero
/// densities out of derivatives.
Float mis_weight(const Float& pdf_a, const Float& pdf_b);

/// The world direction a path continues in after BSDF sample `bs` at `si`. Under
/// derivatives a sampled direction stays fixed in world space (detached sampling: the next
/// vertex slides along it as this one moves); a delta lobe's direction is no random choice
/// but a function of the surface (a refraction through a moving lens) and keeps its
/// derivatives.
Array3f continuation_direction(const SurfaceInteraction& si, const BSDFSample3f& bs);

/// Componentwise a / b where b is nonzero, else 0.
Color3f ratio(const Color3f& a, const Color3f& b);

/// value / detach(value) where value is nonzero, else 0: 1 or 0 in value, with value's
/// derivatives relative to itself.
Color3f relative(const Color3f& value);

/// The derivatives of a BSDF sample's contribution at `si` relative to its value, in the
/// area form: the point `found` (a material point of its surface, with its derivatives:
/// Scene::compute_surface_interaction's follow_shape) and the shading point move as they
/// do, the direction between them follows, with the change of measure from solid angle to
/// area and of `found`'s area element; where nothing was found, the sampled world
/// `direction` stays. Value 1 (0 where the BSDF's value is 0). The sample's density is a
/// sampling decision and has no derivatives here (detached sampling).
Color3f area_form_relative(const Scene& scene, const SurfaceInteraction& si, const SurfaceInteraction& found,
                           const Array3f& direction, const Bool& active);

/// Two uniform numbers in [0, 1).
Array2f next_2d(PCG32& rng);

/// `ray` continued through every area emitter it meets first (hide_emitters): the
/// returned ray starts just past the last emitter hit.
Ray3f skip_area_emitters(const Scene& scene, const Ray3f& ray, const Bool& active);

}  // namespace kiln::render
