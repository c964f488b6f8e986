// Radiance RGBE images (.hdr, Greg Ward's format, as environment maps are often shipped):
// read (flat or run-length encoded scanlines, the standard -Y H +X W orientation) and
// written (flat scanlines, which every reader accepts). Values are linear RGB.
#pragma once

#include <kiln/render/image.h>

#include <string>

namespace kiln::render {

/// The file's pixels as 3-channel linear floats; FileError naming the file when it is not a
/// Radiance image Kiln reads.
Bitmap read_radiance_hdr(const std::string& path);
/// Writes 1 (repeated into RGB) or 3 channels; more raise FileError.
void write_radiance_hdr(const Bitmap& image, const std::string& path);

}  // namespace kiln::render
