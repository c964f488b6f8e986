"""Mitsuba's Bitmap in Kiln: an image on the host with a pixel format, a component format and an
sRGB flag, made from an array or read from a file, converted, split into layers and written.
Files go through Kiln's image I/O (OpenEXR with named channels, PNG, JPEG, Radiance); the
pixels are a NumPy array, reached through the NumPy and DLPack protocols
(`np.array(bitmap)`, `kl.TensorXf(bitmap)`)."""

import enum
from pathlib import Path

import numpy as np

import kiln as _kl
from kiln._kiln_render import _read_image_channels, write_image as _write_image
from kiln.render.resample import resample as _resample


class Struct:
    """Mitsuba's Struct, for its component types (`mi.Struct.Type.Float32`)."""

    class Type(enum.Enum):
        Int8 = np.dtype(np.int8)
        UInt8 = np.dtype(np.uint8)
        Int16 = np.dtype(np.int16)
        UInt16 = np.dtype(np.uint16)
        Int32 = np.dtype(np.int32)
        UInt32 = np.dtype(np.uint32)
        Int64 = np.dtype(np.int64)
        UInt64 = np.dtype(np.uint64)
        Float16 = np.dtype(np.float16)
        Float32 = np.dtype(np.float32)
        Float64 = np.dtype(np.float64)


class PixelFormat(enum.Enum):
    """What a pixel's channels mean (Mitsuba's Bitmap.PixelFormat)."""

    Y = ("Y",)
    YA = ("Y", "A")
    RGB = ("R", "G", "B")
    RGBA = ("R", "G", "B", "A")
    MultiChannel = ()


_FORMAT_OF_COUNT = {1: PixelFormat.Y, 2: PixelFormat.YA, 3: PixelFormat.RGB, 4: PixelFormat.RGBA}
_LUMINANCE = np.array([0.212671, 0.715160, 0.072169])  # common.h's weights
_ROOT_LAYER = "<root>"


def _srgb_encode(linear):
    linear = np.clip(linear, 0.0, 1.0)
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * np.power(linear, 1.0 / 2.4) - 0.055)


def _srgb_decode(encoded):
    return np.where(encoded <= 0.04045, encoded / 12.92, np.power((encoded + 0.055) / 1.055, 2.4))


def _normalized(values, dtype):
    """Integer components as values in [0, 1]; floats unchanged (as float64)."""
    if np.issubdtype(dtype, np.integer):
        return values.astype(np.float64) / np.iinfo(dtype).max
    return values.astype(np.float64)


def _stored(values, dtype):
    """Values in [0, 1] as integer components (rounded, clamped); floats cast."""
    if np.issubdtype(dtype, np.integer):
        top = np.iinfo(dtype).max
        return np.clip(np.rint(values * top), 0, top).astype(dtype)
    return values.astype(dtype)


def _channels(values, source, target):
    """Pixels of `source` format as `target`'s channels (alpha dropped or made opaque, gray
    repeated into RGB, RGB to gray by luminance), as Mitsuba's convert does."""
    if source == target or PixelFormat.MultiChannel in (source, target):
        if source != target:
            raise ValueError(f"Bitmap.convert: cannot convert {source.name} pixels to {target.name}")
        return values
    color = values[..., :3] if source in (PixelFormat.RGB, PixelFormat.RGBA) else values[..., :1]
    alpha = values[..., -1:] if source in (PixelFormat.YA, PixelFormat.RGBA) else np.ones_like(values[..., :1])
    if target in (PixelFormat.Y, PixelFormat.YA) and color.shape[-1] == 3:
        color = (color @ _LUMINANCE)[..., None]
    if target in (PixelFormat.RGB, PixelFormat.RGBA) and color.shape[-1] == 1:
        color = np.repeat(color, 3, axis=-1)
    return np.concatenate([color, alpha], axis=-1) if target in (PixelFormat.YA, PixelFormat.RGBA) else color


class Bitmap:
    """An image (Mitsuba's mi.Bitmap): `Bitmap(array)` from a NumPy array, a Kiln tensor or
    anything with the array protocol, of shape (height, width) or (height, width, channels);
    `Bitmap(path)` reads an .exr, .png or .jpg file (8-bit files stay 8-bit and sRGB-encoded,
    as Mitsuba keeps them)."""

    PixelFormat = PixelFormat
    Float32 = Struct.Type.Float32  # Mitsuba's shorthand for the component format

    def __init__(self, source, pixel_format=None, channel_names=None, srgb_gamma=None):
        self._metadata = {}
        if isinstance(source, (str, Path)):
            values, srgb, file_names = self._read(str(source))
            channel_names = channel_names or file_names
        else:
            values, srgb = np.asarray(source), False
            if values.dtype == np.bool_ or values.dtype.kind not in "uif":
                raise TypeError(f"Bitmap: pixels must be numbers, got an array of {values.dtype}")
        if values.ndim == 2:
            values = values[..., None]
        if values.ndim != 3 or 0 in values.shape:
            raise ValueError(f"Bitmap: pixels must have shape (height, width[, channels]), got {values.shape}")
        self._values = np.ascontiguousarray(values)
        self._srgb = bool(srgb if srgb_gamma is None else srgb_gamma)
        count = values.shape[2]
        if channel_names is not None:
            if len(channel_names) != count:
                raise ValueError(f"Bitmap: {len(channel_names)} channel names for {count} channels")
            self._names = [str(name) for name in channel_names]
            matching = [f for f in PixelFormat if f.value == tuple(self._names)]
            self._format = pixel_format or (matching[0] if matching else PixelFormat.MultiChannel)
        else:
            self._format = pixel_format or _FORMAT_OF_COUNT.get(count, PixelFormat.MultiChannel)
            self._names = list(self._format.value) or [f"ch{i}" for i in range(count)]
        if self._format != PixelFormat.MultiChannel and len(self._format.value) != count:
            raise ValueError(f"Bitmap: pixel format {self._format.name} needs {len(self._format.value)} channels, "
                             f"the pixels have {count}")

    @staticmethod
    def _read(path):
        """The file's pixels, whether they are sRGB-encoded, and its channel names (EXR)."""
        values, names = _read_image_channels(path)
        values = np.asarray(values)
        if Path(path).suffix.lower() in (".exr", ".hdr"):
            return values, False, names or None
        encoded = values.astype(np.float64)
        eight_bit = np.allclose(encoded * 255.0, np.rint(encoded * 255.0), atol=1e-4)
        return _stored(encoded, np.uint8 if eight_bit else np.uint16), True, None

    def width(self):
        return self._values.shape[1]

    def height(self):
        return self._values.shape[0]

    def size(self):
        """(width, height)."""
        return _kl.Array2u(self.width(), self.height())

    def channel_count(self):
        return self._values.shape[2]

    def pixel_format(self):
        return self._format

    def component_format(self):
        return Struct.Type(self._values.dtype)

    def srgb_gamma(self):
        return self._srgb

    def set_srgb_gamma(self, value):
        """Marks the values as sRGB-encoded (or not) without changing them."""
        self._srgb = bool(value)

    def has_alpha(self):
        return self._format in (PixelFormat.YA, PixelFormat.RGBA)

    def metadata(self):
        """The image's metadata: a dict to read and fill (it is not written to files)."""
        return self._metadata

    def convert(self, pixel_format=None, component_format=None, srgb_gamma=None):
        """A new Bitmap with other channels, component type and/or transfer curve."""
        pixel_format = pixel_format or self._format
        dtype = (component_format or self.component_format()).value
        srgb = self._srgb if srgb_gamma is None else bool(srgb_gamma)
        values = _normalized(self._values, self._values.dtype)
        if srgb != self._srgb:
            values = _srgb_encode(values) if srgb else _srgb_decode(values)
        values = _channels(values, self._format, pixel_format)
        names = self._names if pixel_format == self._format else None
        return Bitmap(_stored(values, dtype), pixel_format, names, srgb)

    def split(self):
        """The layers of a multi-channel image as (name, Bitmap) pairs: channels named
        'layer.channel' grouped by layer, the others in '<root>' (Mitsuba's split)."""
        layers = {}
        for index, name in enumerate(self._names):
            layer, _, channel = name.rpartition(".")
            layers.setdefault(layer or _ROOT_LAYER, []).append((index, channel))
        return [(layer, Bitmap(self._values[..., [i for i, _ in entries]], None, [c for _, c in entries], self._srgb))
                for layer, entries in layers.items()]

    def _texture_pixels(self, raw=False):
        """The pixels as float32 (height, width, channels) for a texture or an environment
        map given this Bitmap in load_dict: normalized, and sRGB-decoded unless `raw`."""
        values = _normalized(self._values, self._values.dtype)
        if self._srgb and not raw:
            values = _srgb_decode(values)
        return np.ascontiguousarray(values, dtype=np.float32)

    def write(self, path, *args, **kwargs):
        """Writes the image by the file's extension: .exr as 32-bit floats (linear, with the
        channel names), .png and .jpg as 8-bit sRGB, .hdr as Radiance RGBE. Extra arguments
        (Mitsuba's quality, file format) are not supported."""
        if args or kwargs:
            raise TypeError("Bitmap.write: only the path is supported (the format follows its extension)")
        names = self._names if self._format == PixelFormat.MultiChannel else []
        _write_image(_kl.TensorXf(self._texture_pixels()), str(path), names)

    def resample(self, res, rfilter=None, bc=None, clamp=(-np.inf, np.inf)):
        """A new Bitmap of `res` = (width, height) pixels, filtered with `rfilter` (a
        kr.ReconstructionFilter; Mitsuba's default 2-lobe Lanczos when None), lookups outside
        the image following `bc` (a mi.FilterBoundaryCondition, or a pair for x and y;
        Clamp, Mitsuba's default, when None) and values clamped to `clamp`."""
        width, height = (int(res[0]), int(res[1]))
        if width < 1 or height < 1:
            raise ValueError(f"Bitmap.resample: the resolution must be positive, got {width} x {height}")
        values = _normalized(self._values, self._values.dtype)
        resampled = _resample(values, width, height, rfilter, bc, clamp)
        dtype = self._values.dtype
        stored = _stored(np.clip(resampled, 0.0, 1.0), dtype) if np.issubdtype(dtype, np.integer) else resampled
        return Bitmap(stored.astype(dtype), self._format, self._names, self._srgb)

    def __array__(self, dtype=None, copy=None):
        return self._values if dtype is None else self._values.astype(dtype)

    def __dlpack__(self, **kwargs):
        return self._values.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._values.__dlpack_device__()

    def __repr__(self):
        return (f"Bitmap[pixel_format={self._format.name}, component_format={self.component_format().name}, "
                f"size=[{self.width()}, {self.height()}], srgb_gamma={int(self._srgb)}]")
