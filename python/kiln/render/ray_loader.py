"""Mitsuba's mi.ad.loaders.RayDataLoader: minibatches of pixels drawn from several sensors'
target images, for optimizations that render a batch of rays at a time (the radiance field
tutorial). Every pixel of every sensor is one sample; each pass visits them all once in a
shuffled order of square tiles (`tile_size`: 1 shuffles single pixels, larger tiles keep
neighbouring rays together), padding the last batch with pixels from the start. next()
returns the batch's target pixels, a TensorXf of shape (1, pixels_per_batch, channels), and
a `pixel_batch` sensor set to render those same pixels: kr.render(scene, params,
sensor=batch_sensor, spp=1) gives an image of the target's shape."""

import numpy as np

import kiln as _kl
from kiln._kiln_render import load_dict, traverse


class RayDataLoader:
    """RayDataLoader(sensors, target_images, pixels_per_batch, seed=0, regular_reshuffle=False,
    tile_size=4), Mitsuba 3.9's signature. The sensors' films must share one size, have no
    crop window and as many channels as the target images (height, width, channels)."""

    def __init__(self, sensors, target_images, pixels_per_batch, seed=0, regular_reshuffle=False, tile_size=4):
        sensors = list(sensors) if isinstance(sensors, (list, tuple)) else [sensors]
        targets = list(target_images) if isinstance(target_images, (list, tuple)) else [target_images]
        if not sensors or not targets:
            raise ValueError("kiln.render: RayDataLoader: give at least one sensor and one target image")
        if len(sensors) != len(targets):
            raise ValueError(f"kiln.render: RayDataLoader: {len(sensors)} sensors but {len(targets)} target images")
        if not isinstance(tile_size, int) or tile_size < 1:
            raise ValueError(f"kiln.render: RayDataLoader: tile_size must be a positive integer, got {tile_size!r}")
        self.width, self.height = sensors[0].film().size()
        self.channel_size = self._check(sensors, targets)
        self.num_sensors = len(sensors)
        self.total_pixels = self.num_sensors * self.width * self.height
        if not isinstance(pixels_per_batch, int) or not 0 < pixels_per_batch <= self.total_pixels:
            raise ValueError(f"kiln.render: RayDataLoader: pixels_per_batch must be between 1 and the "
                             f"{self.total_pixels} pixels of the sensors, got {pixels_per_batch!r}")
        self.pixels_per_batch = pixels_per_batch
        self.tile_size = tile_size
        self.tiles_per_row = -(-self.width // tile_size)
        self.tiles_per_col = -(-self.height // tile_size)
        self.tiles_per_sensor = self.tiles_per_row * self.tiles_per_col
        self.iter_shuffle = -(-self.total_pixels // pixels_per_batch)
        self.effective_total_pixels = self.iter_shuffle * pixels_per_batch
        self.pixel_batch_multiplier = self.total_pixels / pixels_per_batch
        self.seed, self.regular_reshuffle, self.counter = seed, regular_reshuffle, 0
        self._targets = np.concatenate([np.asarray(t, dtype=np.float32).reshape(-1, self.channel_size)
                                        for t in targets])
        format = {1: "luminance", 3: "rgb", 4: "rgba"}[self.channel_size]
        self.batch_sensor = load_dict({
            "type": "pixel_batch",
            "film": {"type": "hdrfilm", "width": pixels_per_batch, "height": 1, "pixel_format": format,
                     "filter": {"type": "box"}},
            "sampler": {"type": "independent", "sample_count": 1},
            **{f"sensor_{i}": sensor for i, sensor in enumerate(sensors)}})
        self._sensor_params = traverse(self.batch_sensor)
        self._order = None

    def _check(self, sensors, targets):
        """The channel count the sensors and targets share (ValueError naming what differs)."""
        channels = None
        for i, (sensor, target) in enumerate(zip(sensors, targets)):
            film = sensor.film()
            if tuple(film.size()) != (self.width, self.height):
                raise ValueError(f"kiln.render: RayDataLoader: sensor {i} has a film of {tuple(film.size())}, "
                                 f"sensor 0 one of {(self.width, self.height)}")
            if tuple(film.crop_size()) != tuple(film.size()) or tuple(film.crop_offset()) != (0, 0):
                raise ValueError(f"kiln.render: RayDataLoader: sensor {i} has a crop window, which the loader "
                                 "does not support")
            shape = tuple(target.shape)
            if len(shape) != 3 or shape[:2] != (self.height, self.width):
                raise ValueError(f"kiln.render: RayDataLoader: target image {i} has shape {shape}, expected "
                                 f"({self.height}, {self.width}, channels)")
            if channels is not None and shape[2] != channels:
                raise ValueError(f"kiln.render: RayDataLoader: target image {i} has {shape[2]} channels, "
                                 f"target image 0 {channels}")
            channels = shape[2]
            film_channels = 3 + int(film.has_alpha())
            if channels not in (1, 3, 4) or (channels != 1 and channels != film_channels):
                raise ValueError(f"kiln.render: RayDataLoader: target image {i} has {channels} channels; sensor "
                                 f"{i}'s film gives {film_channels}")
        return channels

    def _shuffle(self, seed):
        """A new order of every pixel (tiles shuffled, pixels within a tile in row order),
        padded to whole batches with pixels from its start."""
        rng = np.random.default_rng(seed)
        if self.tile_size == 1 or self.tile_size >= max(self.width, self.height):
            order = rng.permutation(self.total_pixels)
        else:
            tiles = rng.permutation(self.num_sensors * self.tiles_per_sensor)
            sensor, tile = np.divmod(tiles, self.tiles_per_sensor)
            tile_y, tile_x = np.divmod(tile, self.tiles_per_row)
            offset_y, offset_x = np.divmod(np.arange(self.tile_size * self.tile_size), self.tile_size)
            y = tile_y[:, None] * self.tile_size + offset_y[None, :]
            x = tile_x[:, None] * self.tile_size + offset_x[None, :]
            inside = (y < self.height) & (x < self.width)
            order = ((sensor[:, None] * self.height + y) * self.width + x)[inside]
        padding = np.resize(order, self.effective_total_pixels - self.total_pixels)
        return np.concatenate([order, padding]).astype(np.uint32)

    def next(self):
        """(target, sensor): the next batch's target pixels, (1, pixels_per_batch, channels),
        and the sensor that renders them (the same object every call, set to this batch)."""
        step = self.counter % self.iter_shuffle
        if self._order is None or (self.regular_reshuffle and step == 0):
            self._order = self._shuffle(self.seed + self.counter)
        batch = self._order[step * self.pixels_per_batch:(step + 1) * self.pixels_per_batch]
        self._sensor_params["pixel_indices"] = _kl.UInt32(batch)
        self._sensor_params.update()
        self.counter += 1
        target = np.ascontiguousarray(self._targets[batch]).reshape(1, self.pixels_per_batch, self.channel_size)
        return _kl.TensorXf(target), self.batch_sensor
