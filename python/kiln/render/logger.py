"""Mitsuba's logger as scripts call it (`mi.logger().log_progress(...)`, `mi.Log(...)`): messages
go to stderr through Kiln's log level, progress bars are drawn in place on stderr."""

import sys

import kiln as _kl

_BAR_WIDTH = 40


class Logger:
    """The process's logger (Mitsuba's mi.Logger); `logger()` returns it."""

    def log_level(self):
        return _kl.log_level()

    def set_log_level(self, level):
        _kl.set_log_level(level)

    def log(self, level, message):
        """Prints `message` when `level` is at least as severe as the log level."""
        if not isinstance(level, _kl.LogLevel):
            raise TypeError(f"kiln.render: log(): the level must be a kr.LogLevel, not {type(level).__name__}")
        if level.value <= _kl.log_level().value:
            print(f"{level.name.upper()}: {message}", file=sys.stderr)

    def log_progress(self, progress, name, formatted, eta="", ptr=None):
        """Draws a progress bar for `progress` (0 to 1, clamped) titled `name`, then the text
        `formatted` and `eta`, over the previous one; a new line at 1. (`ptr` is Mitsuba's
        handle for whose progress it is; one bar is drawn at a time here.)"""
        try:
            fraction = min(max(float(progress), 0.0), 1.0)
        except (TypeError, ValueError):
            raise TypeError(f"kiln.render: log_progress(): progress must be a number from 0 to 1, "
                            f"not {progress!r}") from None
        filled = int(round(fraction * _BAR_WIDTH))
        bar = "+" * filled + " " * (_BAR_WIDTH - filled)
        text = " ".join(str(part) for part in (formatted, eta) if part)
        end = "\n" if fraction >= 1.0 else ""
        print(f"\r{name}: [{bar}] {100 * fraction:5.1f}% {text}", end=end, file=sys.stderr, flush=True)


_LOGGER = Logger()


def logger():
    """The process's logger (Mitsuba's mi.logger())."""
    return _LOGGER


def Log(level, message):  # noqa: N802 (Mitsuba's name)
    """Mitsuba's mi.Log(level, message)."""
    _LOGGER.log(level, message)
