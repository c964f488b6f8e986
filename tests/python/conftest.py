"""Shared pytest fixtures: every test starts with Kiln's default flags and log level, and
leaves them that way."""

import pytest

import kiln as kl


@pytest.fixture(autouse=True)
def default_settings():
    flags = {f: kl.flag(f) for f in (kl.Flag.Checks, kl.Flag.Interpreter, kl.Flag.Generalize, kl.Flag.DiskCache,
                                    kl.Flag.Symbolic)}
    level = kl.log_level()
    threshold = kl.generalization_threshold()
    yield
    for f, value in flags.items():
        kl.set_flag(f, value)
    kl.set_log_level(level)
    kl.set_generalization_threshold(threshold)
