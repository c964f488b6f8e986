"""Messages that reach Python from the C++ core use Python's spellings: errors name
`retain_graph=True` and `kl.ControlMode.Evaluated` (module.cpp respells them), and texts
shown in both languages (item(), the disk cache's problem) use no C++ syntax."""

import pytest

import kiln as kl


def message_of(exc, fn):
    with pytest.raises(exc) as info:
        fn()
    return str(info.value)


def test_a_second_backward_names_retain_graph_true():
    x = kl.Float([1.0, 2.0])
    kl.enable_grad(x)
    loss = kl.sum(x * x)
    kl.backward(loss)
    message = message_of(ValueError, lambda: kl.backward(loss))
    assert "retain_graph=True to that backward()" in message, message
    assert "retain_graph=true" not in message


def test_reverse_mode_of_a_symbolic_loop_names_python_arguments_and_modes():
    x = kl.Float([1.0, 2.0, 3.0])
    kl.enable_grad(x)
    _, y = kl.while_loop((kl.UInt32(0), x), lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0), mode="symbolic")
    message = message_of(ValueError, lambda: kl.backward(kl.sum(y)))
    assert "sum_loop=True" in message and "kl.ControlMode.Evaluated" in message, message
    assert "::" not in message and "=true" not in message


def test_item_of_many_elements_names_no_cpp_method():
    message = message_of(kl.SizeError, lambda: kl.Float([1.0, 2.0, 3.0]).item())
    assert message.startswith("kiln: item(): the array has 3 elements"), message
    assert "::" not in message and "read(" not in message


def test_the_disk_cache_problems_name_no_cpp_spelling(tmp_path):
    directory = kl.disk_cache_dir()
    disk = kl.flag(kl.Flag.DiskCache)
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("")
    try:
        kl.set_flag(kl.Flag.DiskCache, False)
        off = kl.cache_stats().disk_problem
        kl.set_flag(kl.Flag.DiskCache, True)
        kl.set_disk_cache_dir(str(not_a_directory))
        refused = kl.cache_stats().disk_problem
    finally:
        kl.set_disk_cache_dir(directory)
        kl.set_flag(kl.Flag.DiskCache, disk)
    assert off.startswith("turned off (the DiskCache flag"), off
    assert "is not a directory" in refused and "call set_disk_cache_dir()" in refused, refused
    assert "::" not in off + refused
