"""kr.ad.loaders.RayDataLoader and the `pixel_batch` sensor it renders (issue 29, the radiance
field tutorial's minibatches): every pixel of every sensor comes once per pass, the batch's
targets are those pixels' values, the batch sensor's rays are exactly the chosen sensors'
rays through the chosen pixels, and a batch render agrees with the full renders."""

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

SIZE = 8


def sensor(angle, size=SIZE, pixel_format="rgb"):
    return kr.load_dict({
        "type": "perspective", "fov": 40,
        "to_world": kr.ScalarTransform4f().rotate([0, 1, 0], angle).look_at(origin=[0, 1, 3.5], target=[0, 1, 0],
                                                                           up=[0, 1, 0]),
        "film": {"type": "hdrfilm", "width": size, "height": size, "filter": {"type": "box"},
                 "pixel_format": pixel_format}})


def targets(count, channels=3):
    return [kl.TensorXf(np.random.default_rng(i).uniform(size=(SIZE, SIZE, channels)).astype(np.float32))
            for i in range(count)]


@pytest.mark.parametrize("tile_size", [1, 3, 16])
def test_a_pass_visits_every_pixel_once_with_its_target(tile_size):
    images = targets(3)
    loader = kr.ad.loaders.RayDataLoader([sensor(a) for a in (0, 30, 60)], images, pixels_per_batch=50,
                                         seed=4, tile_size=tile_size)
    assert loader.total_pixels == 192 and loader.iter_shuffle == 4 and loader.effective_total_pixels == 200
    flat = np.concatenate([np.asarray(image).reshape(-1, 3) for image in images])
    seen = []
    for _ in range(loader.iter_shuffle):
        target, batch_sensor = loader.next()
        assert tuple(target.shape) == (1, 50, 3) and tuple(batch_sensor.film().size()) == (50, 1)
        pixels = np.asarray(kr.traverse(batch_sensor)["pixel_indices"])
        np.testing.assert_array_equal(np.asarray(target)[0], flat[pixels])
        seen.extend(pixels.tolist())
    assert sorted(set(seen)) == list(range(192)) and len(seen) == 200


def test_the_batch_sensors_rays_are_the_chosen_pixels_rays():
    cameras = [sensor(0.0), sensor(45.0)]
    loader = kr.ad.loaders.RayDataLoader(cameras, targets(2), pixels_per_batch=20, seed=1)
    _, batch_sensor = loader.next()
    pixels = np.asarray(kr.traverse(batch_sensor)["pixel_indices"])
    jitter = np.random.default_rng(0).uniform(size=(2, 20)).astype(np.float32)
    batch_position = kl.Array2f(kl.Float((np.arange(20) + jitter[0]) / 20), kl.Float(jitter[1]))
    ray, weight = batch_sensor.sample_ray(batch_position)
    which, within = np.divmod(pixels, SIZE * SIZE)
    row, column = np.divmod(within, SIZE)
    for index, camera in enumerate(cameras):
        mine = which == index
        position = kl.Array2f(kl.Float(((column + jitter[0]) / SIZE)[mine].astype(np.float32)),
                              kl.Float(((row + jitter[1]) / SIZE)[mine].astype(np.float32)))
        expected, _ = camera.sample_ray(position)
        np.testing.assert_allclose(np.asarray(ray.o)[mine], np.asarray(expected.o), atol=1e-6)
        np.testing.assert_allclose(np.asarray(ray.d)[mine], np.asarray(expected.d), atol=1e-6)
    assert np.all(np.asarray(weight) == 1.0)


def test_a_batch_render_agrees_with_the_full_renders():
    description = kr.cornell_box()
    cameras = [sensor(a, pixel_format="rgb") for a in (0.0, 20.0)]
    scene = kr.load_dict(description)
    full = [kr.render(scene, sensor=camera, spp=256, seed=1) for camera in cameras]
    loader = kr.ad.loaders.RayDataLoader(cameras, full, pixels_per_batch=64, seed=2)
    target, batch_sensor = loader.next()
    image = kr.render(scene, sensor=batch_sensor, spp=256, seed=5)
    assert tuple(image.shape) == (1, 64, 3)
    ours, theirs = np.asarray(image).ravel(), np.asarray(target).ravel()
    # The same pixels (a wrong mapping would decorrelate them), without bias (within noise).
    assert np.corrcoef(ours, theirs)[0, 1] > 0.98
    difference = ours - theirs
    assert abs(difference.mean()) < 4 * difference.std() / np.sqrt(difference.size)


def test_loader_errors():
    with pytest.raises(ValueError, match="2 sensors but 1 target"):
        kr.ad.loaders.RayDataLoader([sensor(0), sensor(1)], targets(1), pixels_per_batch=4)
    with pytest.raises(ValueError, match="pixels_per_batch"):
        kr.ad.loaders.RayDataLoader([sensor(0)], targets(1), pixels_per_batch=65)
    with pytest.raises(ValueError, match="film of"):
        kr.ad.loaders.RayDataLoader([sensor(0), sensor(1, size=4)], targets(2), pixels_per_batch=4)
    with pytest.raises(ValueError, match="4 channels"):
        kr.ad.loaders.RayDataLoader([sensor(0)], targets(1, channels=4), pixels_per_batch=4)
    with pytest.raises(ValueError, match="tile_size"):
        kr.ad.loaders.RayDataLoader([sensor(0)], targets(1), pixels_per_batch=4, tile_size=0)
    with pytest.raises(ValueError, match="nested"):
        kr.load_dict({"type": "pixel_batch", "film": {"type": "hdrfilm", "width": 4, "height": 1}})
    with pytest.raises(ValueError, match="one row"):
        kr.load_dict({"type": "pixel_batch", "film": {"type": "hdrfilm", "width": 4, "height": 2}, "s": sensor(0)})


def test_films_can_be_one_long_row_but_not_too_many_pixels():
    row = kr.load_dict({"type": "hdrfilm", "width": 65536, "height": 1})
    assert tuple(row.size()) == (65536, 1)
    with pytest.raises(ValueError, match="between 1 and 1048576"):
        kr.load_dict({"type": "hdrfilm", "width": 2**20 + 1, "height": 1})
    with pytest.raises(ValueError, match="2\\^30 pixels"):
        kr.load_dict({"type": "hdrfilm", "width": 2**20, "height": 2**11})


def test_a_refused_film_size_or_crop_leaves_the_film_as_it_was():
    scene = kr.load_dict(kr.cornell_box())
    params = kr.traverse(scene)
    film = scene.sensors()[0].film()
    for key, bad, message in [("sensor.film.size", (0, 5), "must be non-empty"),
                              ("sensor.film.size", (2**21, 1), "exceeds 1048576 pixels"),
                              ("sensor.film.crop_offset", (500, 0), "lie inside the film")]:
        params[key] = bad
        with pytest.raises(ValueError, match=message):
            params.update()
        assert tuple(film.size()) == (256, 256) and tuple(film.crop_size()) == (256, 256)
        assert tuple(film.crop_offset()) == (0, 0)
    with pytest.raises(ValueError, match=r"two sizes from 0 to 2\^32 - 1, got \(-1, 5\)"):
        params["sensor.film.size"] = (-1, 5)
    assert kr.render(scene, spp=1).shape == (256, 256, 3)
