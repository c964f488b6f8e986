"""Procedural meshes for the geometry examples: an icosphere, and a lumpy blob made from one
by smooth random bumps (asymmetric, so its silhouettes tell its pose and shape), written as
PLY files that the `ply` shape reads."""

import numpy as np

ICOSAHEDRON_FACES = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
                     (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5),
                     (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]


def icosphere(subdivisions):
    """(points on the unit sphere (n, 3), faces (m, 3)): an icosahedron, each triangle split in
    four `subdivisions` times."""
    t = (1 + 5 ** 0.5) / 2
    corners = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
               (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    points = [np.array(c, dtype=np.float64) / np.linalg.norm(c) for c in corners]
    faces = ICOSAHEDRON_FACES
    for _ in range(subdivisions):
        middle, refined = {}, []

        def midpoint(a, b):
            key = (min(a, b), max(a, b))
            if key not in middle:
                m = points[a] + points[b]
                points.append(m / np.linalg.norm(m))
                middle[key] = len(points) - 1
            return middle[key]

        for a, b, c in faces:
            ab, bc, ca = midpoint(a, b), midpoint(b, c), midpoint(c, a)
            refined += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = refined
    return np.array(points), np.array(faces)


def lumpy(points, seed, bumps=6, height=(0.1, 0.3), stretch=(1.0, 1.2, 0.9)):
    """`points` on the unit sphere pushed out by `bumps` smooth bumps of random directions and
    heights, then stretched per axis."""
    rng = np.random.default_rng(seed)
    directions = rng.normal(size=(bumps, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    radius = 1 + sum(rng.uniform(*height) * np.exp(8 * (points @ d - 1)) for d in directions)
    return points * radius[:, None] * np.array(stretch)


def write_ply(path, points, faces):
    """An ASCII PLY file of the triangle mesh."""
    with open(path, "w") as f:
        f.write(f"ply\nformat ascii 1.0\nelement vertex {len(points)}\nproperty float x\nproperty float y\n"
                f"property float z\nelement face {len(faces)}\nproperty list uchar int vertex_indices\nend_header\n")
        f.writelines(f"{x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in points)
        f.writelines(f"3 {a} {b} {c}\n" for a, b, c in faces)
