// A triangle mesh's silhouette seen from a point: the edges along which the mesh folds
// away from the viewer, and its open boundary.
#pragma once

#include <kiln/render/mesh_data.h>
#include <kiln/render/silhouette.h>

#include <memory>

namespace kiln::render {

/// The silhouette of the mesh `host` (world space, as the ray tracer sees it) seen from
/// `viewpoint`: an edge belongs to it when its one or two triangles lie on the same side
/// of the plane through the edge and the viewpoint (which needs no consistent winding).
/// Points move with `positions` (the mesh's vertex_positions, with their derivatives).
/// Edges across which shading jumps count too: where normals or uvs are split, and on a
/// `flat_shaded` mesh (no vertex normals) every edge whose two triangles are not coplanar.
/// Null when no edge qualifies.
std::unique_ptr<Silhouette> mesh_silhouette(const MeshData& host, bool flat_shaded, const Float& positions,
                                            const std::array<float, 3>& viewpoint);
/// The same for any viewpoints, one per lane: edges drawn through a tree that culls those
/// whose triangles all face the lane's viewpoint or all face away (mesh_edge_tree.h), by
/// length among the rest, and tested per lane.
std::unique_ptr<Silhouette> mesh_silhouettes(const MeshData& host, bool flat_shaded, const Float& positions);

}  // namespace kiln::render
