"""Uncompressed 32-bit float OpenEXR files: the format of the render references and test assets.

The references must be readable by the tests with plain Python and NumPy (no OpenEXR module,
no Mitsuba, and before kiln.render can read multi-channel files), so they are written in the
simplest layout the OpenEXR specification allows and read back only in that layout:

- one part, scan lines stored top to bottom (lineOrder INCREASING_Y), one line per chunk,
  NO_COMPRESSION, every channel FLOAT with sampling 1 x 1, dataWindow == displayWindow
  starting at (0, 0);
- channels named freely (R, G, B, A, dd.T, ...); the file stores them sorted by name as the
  specification requires, and `write_exr` / `read_exr` take and return them in the caller's
  order.

Any other file (compressed, half floats, tiled, ...) is rejected by `read_exr` with a
ValueError naming the file and the unsupported feature. OpenEXR itself (and so Mitsuba and
kiln.render) reads these files as any other EXR.
"""

import struct

import numpy as np

MAGIC = 20000630
PIXEL_TYPE_FLOAT = 2
NO_COMPRESSION = 0
INCREASING_Y = 0


def _attribute(name, type_name, payload):
    return name.encode() + b"\0" + type_name.encode() + b"\0" + struct.pack("<i", len(payload)) + payload


def write_exr(path, image, channel_names):
    """Writes `image` (height, width, channels) as float32 channels named `channel_names`."""
    image = np.asarray(image, dtype=np.float32)
    if image.ndim == 2:
        image = image[:, :, None]
    height, width, channels = image.shape
    if len(channel_names) != channels or len(set(channel_names)) != channels:
        raise ValueError(f"{path}: {channels} channels need as many distinct names, got {channel_names}")
    stored = sorted(range(channels), key=lambda c: channel_names[c].encode())
    chlist = b"".join(channel_names[c].encode() + b"\0" + struct.pack("<iB3xii", PIXEL_TYPE_FLOAT, 0, 1, 1)
                      for c in stored) + b"\0"
    window = struct.pack("<iiii", 0, 0, width - 1, height - 1)
    header = b"".join([
        struct.pack("<ii", MAGIC, 2),
        _attribute("channels", "chlist", chlist),
        _attribute("compression", "compression", bytes([NO_COMPRESSION])),
        _attribute("dataWindow", "box2i", window),
        _attribute("displayWindow", "box2i", window),
        _attribute("lineOrder", "lineOrder", bytes([INCREASING_Y])),
        _attribute("pixelAspectRatio", "float", struct.pack("<f", 1.0)),
        _attribute("screenWindowCenter", "v2f", struct.pack("<ff", 0.0, 0.0)),
        _attribute("screenWindowWidth", "float", struct.pack("<f", 1.0)),
        b"\0",
    ])
    line_bytes = width * channels * 4
    chunk_size = 8 + line_bytes
    first_chunk = len(header) + 8 * height
    offsets = struct.pack(f"<{height}Q", *(first_chunk + y * chunk_size for y in range(height)))
    # A line holds each channel's `width` values in turn, channels in stored (sorted) order.
    lines = np.ascontiguousarray(image[:, :, stored].transpose(0, 2, 1)).astype("<f4")
    with open(path, "wb") as f:
        f.write(header + offsets)
        for y in range(height):
            f.write(struct.pack("<ii", y, line_bytes) + lines[y].tobytes())


def _read_attributes(data, path):
    """The header's attributes as {name: (type, payload)} and the offset just past the header."""
    magic, version = struct.unpack_from("<ii", data, 0)
    if magic != MAGIC:
        raise ValueError(f"{path}: not an OpenEXR file")
    if version != 2:
        raise ValueError(f"{path}: only single-part scan-line OpenEXR files are read (version field {version:#x})")
    attributes, pos = {}, 8
    while data[pos] != 0:
        name_end = data.index(b"\0", pos)
        type_end = data.index(b"\0", name_end + 1)
        (size,) = struct.unpack_from("<i", data, type_end + 1)
        payload_start = type_end + 5
        type_name = data[name_end + 1:type_end].decode()
        attributes[data[pos:name_end].decode()] = (type_name, data[payload_start:payload_start + size])
        pos = payload_start + size
    return attributes, pos + 1


def _channel_list(payload, path):
    names, pos = [], 0
    while payload[pos] != 0:
        end = payload.index(b"\0", pos)
        pixel_type, _, x_sampling, y_sampling = struct.unpack_from("<iB3xii", payload, end + 1)
        name = payload[pos:end].decode()
        if pixel_type != PIXEL_TYPE_FLOAT or (x_sampling, y_sampling) != (1, 1):
            raise ValueError(f"{path}: channel {name} is not a 32-bit float channel sampled 1 x 1")
        names.append(name)
        pos = end + 17
    return names


def read_exr(path):
    """Reads a file in the layout above: returns (image (height, width, channels) float32, names).

    Channels come back in the file's stored (name-sorted) order; `read_exr_channels` picks
    them by name."""
    with open(path, "rb") as f:
        data = f.read()
    attributes, pos = _read_attributes(data, path)
    for required in ("channels", "compression", "dataWindow", "lineOrder"):
        if required not in attributes:
            raise ValueError(f"{path}: the header has no {required} attribute")
    if attributes["compression"][1][0] != NO_COMPRESSION:
        raise ValueError(f"{path}: compressed OpenEXR files are not read (write references with write_exr)")
    if attributes["lineOrder"][1][0] != INCREASING_Y:
        raise ValueError(f"{path}: only increasing-y line order is read")
    if "tiles" in attributes:
        raise ValueError(f"{path}: tiled OpenEXR files are not read")
    names = _channel_list(attributes["channels"][1], path)
    x_min, y_min, x_max, y_max = struct.unpack("<iiii", attributes["dataWindow"][1])
    if (x_min, y_min) != (0, 0):
        raise ValueError(f"{path}: the data window must start at (0, 0)")
    width, height, channels = x_max + 1, y_max + 1, len(names)
    offsets = struct.unpack_from(f"<{height}Q", data, pos)
    line_bytes = width * channels * 4
    image = np.empty((height, width, channels), dtype=np.float32)
    for offset in offsets:
        y, size = struct.unpack_from("<ii", data, offset)
        if size != line_bytes or not 0 <= y < height:
            raise ValueError(f"{path}: scan line {y} holds {size} bytes, not {line_bytes}")
        line = np.frombuffer(data, dtype="<f4", count=width * channels, offset=offset + 8)
        image[y] = line.reshape(channels, width).T
    return image, names


def read_exr_channels(path, channel_names):
    """Reads the file and returns its channels `channel_names` in that order (height, width, n)."""
    image, names = read_exr(path)
    missing = [n for n in channel_names if n not in names]
    if missing:
        raise ValueError(f"{path}: has no channel(s) {missing} (it has {names})")
    return image[:, :, [names.index(n) for n in channel_names]]
