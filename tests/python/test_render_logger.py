"""Mitsuba's logger as tutorial scripts call it: mi.logger().log_progress(...) and mi.Log(...)."""

import pytest

import kiln as kl
import kiln.render as kr


def test_progress_bars_are_drawn_in_place_and_end_with_a_new_line(capsys):
    log = kr.logger()
    assert log is kr.logger()
    log.log_progress(0.25, "Caustic Optimization", "Iteration 001: loss=0.5", "")
    log.log_progress(1.0, "Caustic Optimization", "Iteration 002: loss=0.25", "")
    err = capsys.readouterr().err
    assert err.startswith("\rCaustic Optimization: [") and " 25.0% Iteration 001: loss=0.5" in err
    assert err.endswith("100.0% Iteration 002: loss=0.25\n")
    assert err.count("+") == 40 + 10


def test_messages_follow_the_log_level(capsys):
    saved = kl.log_level()
    try:
        kr.set_log_level(kr.LogLevel.Warn)
        kr.Log(kr.LogLevel.Info, "hidden")
        kr.Log(kr.LogLevel.Warn, "shown")
        assert capsys.readouterr().err == "WARN: shown\n"
        assert kr.logger().log_level() == kr.LogLevel.Warn
    finally:
        kl.set_log_level(saved)


@pytest.mark.parametrize("call", [lambda: kr.logger().log_progress("half", "x", ""),
                                  lambda: kr.Log("warn", "a string is not a level")])
def test_bad_arguments_are_type_errors(call):
    with pytest.raises(TypeError, match="kiln.render: log"):
        call()
