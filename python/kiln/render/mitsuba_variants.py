"""Mitsuba's variants in Kiln: `*_rgb` names pick the device new arrays go to (scalar and LLVM
variants the CPU, CUDA ones the GPU); spectral, monochrome and polarized variants are refused
with a reason, since Kiln renders RGB only."""

import kiln as _kl

_DEVICE_OF_VARIANT = {
    "scalar_rgb": "cpu",
    "llvm_rgb": "cpu",
    "llvm_ad_rgb": "cpu",
    "cuda_rgb": "cuda",
    "cuda_ad_rgb": "cuda",
}
_UNSUPPORTED_KINDS = (("polarized", "polarization"), ("spectral", "spectral rendering"),
                      ("mono", "monochrome rendering"))

_current = None


def _device_usable(device):
    """None when `device` can take arrays here, else why not."""
    previous = _kl.default_device()
    try:
        _kl.set_device(device)
    except ValueError as error:
        return str(error)
    finally:
        _kl.set_device(previous)
    return None


def variants():
    """The variant names this process can use (Mitsuba's `mi.variants()`): the RGB ones of the
    devices Kiln finds."""
    cuda = _device_usable("cuda") is None
    return [name for name, device in _DEVICE_OF_VARIANT.items() if device == "cpu" or cuda]


def variant():
    """The variant set by `set_variant`, or None before it is called."""
    return _current


def _why_not(name):
    for word, feature in _UNSUPPORTED_KINDS:
        if word in name:
            return f"Kiln renders RGB only; {feature} ('{name}') is not supported"
    if name not in _DEVICE_OF_VARIANT:
        return f"'{name}' is not a variant; Kiln's are {', '.join(_DEVICE_OF_VARIANT)}"
    return _device_usable(_DEVICE_OF_VARIANT[name])


def set_variant(*names):
    """Sets the first usable variant of `names` (Mitsuba's `mi.set_variant`): it makes its
    device the default for new arrays and scenes, and np.array() of vectors Dr.Jit's
    (components, lanes) layout (kl.set_numpy_layout('components')). ImportError, with each
    name's reason, when none can be used — as Mitsuba raises, so `try:
    set_variant('cuda_ad_rgb') except ImportError:` works unchanged."""
    global _current
    if not names:
        raise TypeError("set_variant() needs at least one variant name")
    reasons = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"set_variant() takes variant names (str), not {type(name).__name__}")
        reason = _why_not(name)
        if reason is None:
            _kl.set_device(_DEVICE_OF_VARIANT[name])
            _kl.set_numpy_layout("components")
            _current = name
            return
        reasons.append(reason)
    raise ImportError("none of the requested variants can be used: " + "; ".join(reasons))
