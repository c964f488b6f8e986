"""Is a renderer unbiased against a reference? The statistical criterion of the render tests.

Inputs: two reference renders R1, R2 of a scene (Mitsuba 3, high spp, seeds 0 and 1) and P
independent test renders K_1..K_P (the renderer under test, seeds 2..P+1, equal spp), each
an image (height, width, channels). An unbiased renderer's mean image equals the
references' expectation; the question is whether the difference we see is explained by the
noise of both.

The criterion, per channel and per region of pixels:

- Regions: the whole image; square blocks of `block` x `block` pixels (edge blocks may be
  smaller); every pixel row; every pixel column. The whole image catches a small global
  bias (a light or an albedo a few percent off), blocks a local one (a highlight's shape),
  rows and columns a changed reconstruction filter (its effect cancels inside a block but
  not along a straight edge).
- For a region, m_k is the mean of K_k over the region and r_1, r_2 the same for the
  references. The renders are independent across seeds, so the P values m_k are independent
  samples of the test renderer's region mean, whatever the pixel correlations inside one
  render (the filter spreads samples over neighbouring pixels). With
      mean_test = mean_k m_k,      var_test = sample variance of m_k / P,
      mean_ref  = (r_1 + r_2) / 2, var_ref  = (r_1 - r_2)^2 / 4,
      var_num   = (tolerance * |mean_ref|)^2,
  the statistic is t = (mean_test - mean_ref) / sqrt(var_test + var_ref + var_num), compared
  with Student's t distribution with the Welch-Satterthwaite degrees of freedom (P - 1 for
  the test part, 1 for the reference part, var_num known exactly; rounded down). var_num
  lets deterministic regions (a directly seen emitter, the background, alpha) differ by
  float rounding: a relative difference well below `tolerance` (1e-3) is not a failure.
- The references' spread enters with a single degree of freedom, so they must have many
  more samples than all test renders together (the committed ones: 16384 spp each against
  P x spp = 32 x 64 = 2048): then var_ref is a small correction and the degrees of freedom
  stay near P - 1.
- Each statistic has a two-sided p-value; the image fails when any p-value is below
  alpha / N (Bonferroni), N being the number of statistics (channels x regions). So the
  chance that an unbiased renderer fails the image is at most alpha; the test gives each
  scene alpha = 1e-3 / number of scenes.
- A region whose test and reference values are all exactly equal (both black, say) passes
  with t = 0. A NaN or infinity in a test render fails at once, naming the pixel; one in a
  reference is an error of the reference. Shapes (crop size, channel count) must agree.

AOV channels (depth, position, normals, uv, albedo) and alpha are channels like the others:
the AOV integrator's values are pixel averages of per-sample values, unbiased estimates of
their expectation, so the same criterion applies.

Plain Python and NumPy (no SciPy): Student's t tail is computed from its closed form for
integer degrees of freedom.
"""

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from exr_float import read_exr_channels

REFERENCE_DIR = Path(__file__).resolve().parent / "references"
DEFAULT_TOLERANCE = 1e-3
MAX_DOF = 10000  # Student's t with this many degrees of freedom is the normal distribution to 1e-4


def student_t_two_sided_p(t, dof):
    """P(|T| >= |t|) for Student's t with integer `dof` >= 1 (Abramowitz & Stegun 26.7.3-4)."""
    dof = int(dof)
    if dof < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {dof}")
    if math.isinf(t):
        return 0.0
    theta = math.atan(abs(t) / math.sqrt(dof))
    sin_t, cos2 = math.sin(theta), math.cos(theta) ** 2
    if dof % 2 == 1:
        series, term = 0.0, math.cos(theta)
        for k in range(1, (dof - 1) // 2 + 1):
            series += term
            term *= cos2 * (2 * k) / (2 * k + 1)
        inside = 2 / math.pi * (theta + sin_t * series)
    else:
        series, term = 0.0, 1.0
        for k in range(1, dof // 2 + 1):
            series += term
            term *= cos2 * (2 * k - 1) / (2 * k)
        inside = sin_t * series
    return max(0.0, 1.0 - inside)


@dataclass
class Regions:
    """The regions of an image as a 0/1 membership matrix (regions x pixels) and their names."""
    membership: np.ndarray
    names: list


def image_regions(height, width, block):
    """Whole image, block x block tiles, rows and columns of a height x width image."""
    rows_of, cols_of = np.divmod(np.arange(height * width), width)
    masks, names = [np.ones(height * width, dtype=bool)], ["whole image"]
    for y0 in range(0, height, block):
        for x0 in range(0, width, block):
            masks.append((rows_of >= y0) & (rows_of < y0 + block) & (cols_of >= x0) & (cols_of < x0 + block))
            names.append(f"block x {x0}..{min(x0 + block, width) - 1}, y {y0}..{min(y0 + block, height) - 1}")
    for y in range(height):
        masks.append(rows_of == y)
        names.append(f"row y {y}")
    for x in range(width):
        masks.append(cols_of == x)
        names.append(f"column x {x}")
    return Regions(np.array(masks, dtype=np.float64), names)


@dataclass
class Comparison:
    """The outcome of `compare`: whether it passed and a report naming the worst statistic."""
    passed: bool
    report: str
    worst_p: float
    threshold_p: float
    statistics: int

    def __bool__(self):
        return self.passed


def _first_non_finite(images):
    index = np.argwhere(~np.isfinite(images))[0]
    return tuple(int(i) for i in index)


def _input_failure(references, renders, channel_names):
    """Why the renders cannot be compared at all (shape, NaN), or None; raises on bad arguments."""
    if references.ndim != 4 or references.shape[0] != 2:
        raise ValueError(f"compare() takes two reference images (2, H, W, C), not shape {references.shape}")
    if renders.ndim != 4 or renders.shape[0] < 2:
        raise ValueError(f"compare() takes at least two test renders (P, H, W, C), not shape {renders.shape}")
    if len(channel_names) != references.shape[3]:
        raise ValueError(f"{len(channel_names)} channel names for {references.shape[3]} channels")
    if not np.isfinite(references).all():
        raise ValueError(f"reference (image, y, x, channel) {_first_non_finite(references)} is not finite")
    if renders.shape[1:] != references.shape[1:]:
        return (f"the renders have shape (H, W, C) = {renders.shape[1:]}, the references "
                f"{references.shape[1:]} (channels {channel_names})")
    if not np.isfinite(renders).all():
        k, y, x, c = _first_non_finite(renders)
        return f"render {k} has {renders[k, y, x, c]} at pixel x {x}, y {y}, channel {channel_names[c]}"
    return None


def _region_means(images, regions):
    """Means of images (N, H, W, C) over each region: (regions, N, C)."""
    flat = images.reshape(images.shape[0], -1, images.shape[3])
    return np.einsum("rp,ipc->ric", regions.membership, flat) / regions.membership.sum(axis=1)[:, None, None]


def compare(references, renders, channel_names=None, alpha=1e-4, block=8, tolerance=DEFAULT_TOLERANCE, floor=0.0):
    """Applies the criterion above to references (2, H, W, C) and test renders (P, H, W, C).
    `floor` adds an absolute spread, relative to the largest region mean of the references:
    float32 rounding leaves region means of about 1e-9 where a derivative is 0, which would
    otherwise count as differences (the derivative images of geometry have such regions)."""
    references = np.asarray(references, dtype=np.float64)
    renders = np.asarray(renders, dtype=np.float64)
    channel_names = channel_names or [str(c) for c in range(references.shape[-1])]
    failure = _input_failure(references, renders, channel_names)
    if failure is not None:
        return Comparison(False, failure, 0.0, 0.0, 0)

    regions = image_regions(references.shape[1], references.shape[2], block)
    ref_means, test_means = _region_means(references, regions), _region_means(renders, regions)
    p_count = renders.shape[0]
    mean_test = test_means.mean(axis=1)
    var_test = test_means.var(axis=1, ddof=1) / p_count
    mean_ref = ref_means.mean(axis=1)
    var_ref = (ref_means[:, 0] - ref_means[:, 1])**2 / 4
    var_total = var_test + var_ref + (tolerance * np.abs(mean_ref))**2 + (floor * np.abs(mean_ref).max())**2
    difference = mean_test - mean_ref
    exact = var_total == 0
    t = np.where(exact, np.where(difference == 0, 0.0, np.inf), difference / np.sqrt(np.where(exact, 1, var_total)))
    # Welch-Satterthwaite (var_num is known exactly); MAX_DOF stands for the normal limit.
    denominator = var_test**2 / (p_count - 1) + var_ref**2
    dof = np.where(denominator > 0, var_total**2 / np.where(denominator > 0, denominator, 1), MAX_DOF)
    dof = np.clip(np.floor(dof), 1, MAX_DOF)
    p_values = np.array([student_t_two_sided_p(ti, di) for ti, di in zip(t.ravel(), dof.ravel())]).reshape(t.shape)

    statistics = p_values.size
    threshold = alpha / statistics
    r, c = np.unravel_index(np.argmin(p_values), p_values.shape)
    worst = (f"{regions.names[r]}, channel {channel_names[c]}: test mean {mean_test[r, c]:.6g} "
             f"(sd {math.sqrt(var_test[r, c]):.3g} from {p_count} renders), reference mean {mean_ref[r, c]:.6g} "
             f"(R1 {ref_means[r, 0, c]:.6g}, R2 {ref_means[r, 1, c]:.6g}), t = {t[r, c]:.3g} with "
             f"{int(dof[r, c])} dof, p = {p_values[r, c]:.3g}")
    failing = int((p_values < threshold).sum())
    verdict = "passed" if failing == 0 else f"FAILED: {failing} of {statistics} statistics below p = {threshold:.3g}"
    report = (f"{verdict} (alpha {alpha:g} over {statistics} statistics: {len(channel_names)} channels x "
              f"{len(regions.names)} regions). Worst: {worst}")
    return Comparison(failing == 0, report, float(p_values[r, c]), threshold, statistics)


def reference_paths(scene, directory=REFERENCE_DIR):
    """The two reference images and the metadata file of `scene`."""
    directory = Path(directory)
    return [directory / f"{scene}_s{seed}.exr" for seed in (0, 1)], directory / f"{scene}.json"


def load_references(scene, directory=REFERENCE_DIR):
    """The references of `scene` as (2, H, W, C) and their metadata (spp, channel names, ...).

    A missing reference raises FileNotFoundError: it never passes silently."""
    images, metadata_path = reference_paths(scene, directory)
    metadata = json.loads(metadata_path.read_text())
    names = metadata["channels"]
    return np.stack([read_exr_channels(path, names) for path in images]), metadata
