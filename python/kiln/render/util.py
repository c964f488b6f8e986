"""Mitsuba's `mi.util` helpers for images: a rendered tensor as a Bitmap, and written to a file."""

from kiln.render.bitmap import Bitmap, Struct


def convert_to_bitmap(data, uint8_srgb=True):
    """`data` (a Bitmap, a kl.TensorXf or an array of shape (height, width[, channels])) as a
    Bitmap: 8-bit sRGB-encoded when `uint8_srgb` (for display), else as it is."""
    bitmap = data if isinstance(data, Bitmap) else Bitmap(data)
    if uint8_srgb:
        bitmap = bitmap.convert(component_format=Struct.Type.UInt8, srgb_gamma=True)
    return bitmap


def write_bitmap(filename, data, write_async=True):
    """Writes `data` to `filename` by its extension (.exr linear floats, .png 8-bit sRGB).
    `write_async` is accepted for Mitsuba's signature; the file is written before returning."""
    bitmap = data if isinstance(data, Bitmap) else Bitmap(data)
    bitmap.write(filename)
