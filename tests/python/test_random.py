"""kl.PCG32 against a scalar transcription of the reference PCG32 (pcg32_srandom_r and friends)."""

import struct

import numpy as np
import pytest

import kiln as kl

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1
DEMO_OUTPUTS = [0xA15C02B7, 0x7B47F409, 0xBA1D3330, 0x83D2F293, 0xBFA4784B, 0xCBED606E]


class Reference:
    """One lane of O'Neill's pcg32.h, in Python integers."""

    def __init__(self, initstate, initseq):
        self.state = 0
        self.inc = ((initseq << 1) | 1) & MASK64
        self.next()
        self.state = (self.state + initstate) & MASK64
        self.next()

    def next(self):
        old = self.state
        self.state = (old * 6364136223846793005 + self.inc) & MASK64
        xorshifted = (((old >> 18) ^ old) >> 27) & MASK32
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & MASK32

    def bounded(self, bound):
        threshold = ((1 << 32) - bound) % bound
        while True:
            r = self.next()
            if r >= threshold:
                return r % bound

    def next_float(self):
        return struct.unpack("<f", struct.pack("<I", (self.next() >> 9) | 0x3F800000))[0] - 1.0

    def next_double(self):
        return struct.unpack("<d", struct.pack("<Q", (self.next() << 20) | 0x3FF0000000000000))[0] - 1.0


def default_references(lanes, initstate=kl.PCG32_DEFAULT_STATE):
    return [Reference(initstate, kl.PCG32_DEFAULT_STREAM + i) for i in range(lanes)]


@pytest.fixture(params=[False, True], ids=["llvm", "interpreter"])
def backend(request):
    kl.set_flag(kl.Flag.Interpreter, request.param)  # conftest restores it
    return request.param


def test_constants_are_the_reference_ones():
    assert kl.PCG32_DEFAULT_STATE == 0x853C49E6748FEA9B
    assert kl.PCG32_DEFAULT_STREAM == 0xDA3E39CB94B95BDB
    ref = Reference(42, 54)
    assert [ref.next() for _ in DEMO_OUTPUTS] == DEMO_OUTPUTS


def test_demo_seed_gives_the_published_stream(backend):
    rng = kl.PCG32(1, 42, 54)
    assert rng.size() == 1
    assert [rng.next_uint32()[0] for _ in DEMO_OUTPUTS] == DEMO_OUTPUTS


def test_demo_seed_broadcasts_to_many_lanes():
    rng = kl.PCG32(37, kl.UInt64(42), kl.UInt64(54))
    assert rng.size() == 37
    for expected in DEMO_OUTPUTS:
        got = rng.next_uint32().numpy()
        assert got.dtype == np.uint32
        np.testing.assert_array_equal(got, np.full(37, expected, np.uint32))


@pytest.mark.parametrize("lanes", [1, 5, 37])
def test_default_seeding_gives_one_stream_per_lane(backend, lanes):
    rng = kl.PCG32(lanes)
    refs = default_references(lanes)
    for _ in range(40):
        x = rng.next_uint32()
        kl.eval(x, rng)
        np.testing.assert_array_equal(x.numpy(), [r.next() for r in refs])
    np.testing.assert_array_equal(rng.state.numpy(), np.array([r.state for r in refs], np.uint64))
    if lanes > 1:  # independent lanes: the streams differ
        draws = np.stack([rng.next_uint32().numpy() for _ in range(4)], axis=1)
        assert len({tuple(row) for row in draws}) == lanes


def test_initstate_alone_seeds_lane_i_on_the_default_stream_plus_i():
    rng = kl.PCG32(9, kl.UInt64(12345))
    refs = default_references(9, initstate=12345)
    for _ in range(20):
        np.testing.assert_array_equal(rng.next_uint32().numpy(), [r.next() for r in refs])


def test_explicit_seeds_per_lane():
    lanes = 19
    initstate = [(0x9E3779B97F4A7C15 * (i + 1)) & MASK64 for i in range(lanes)]
    initseq = [(~i & MASK64) if i % 3 == 0 else (i << 58) & MASK64 for i in range(lanes)]
    rng = kl.PCG32(lanes, kl.UInt64(np.array(initstate, np.uint64)), kl.UInt64(np.array(initseq, np.uint64)))
    refs = [Reference(s, q) for s, q in zip(initstate, initseq)]
    for _ in range(50):
        np.testing.assert_array_equal(rng.next_uint32().numpy(), [r.next() for r in refs])


def test_unevaluated_draws_fuse_and_stay_exact():
    rng = kl.PCG32(16)
    refs = default_references(16)
    a, b, c = rng.next_uint32(), rng.next_uint32(), rng.next_uint32()
    kl.eval(a, b, c, rng)
    for draw in (a, b, c):
        np.testing.assert_array_equal(draw.numpy(), [r.next() for r in refs])


def test_floats_are_exact_and_in_the_unit_interval(backend):
    lanes = 29
    rng = kl.PCG32(lanes)
    refs = default_references(lanes)
    for _ in range(30):
        f, d = rng.next_float32(), rng.next_float64()
        kl.eval(f, d, rng)
        ff, dd = f.numpy(), d.numpy()
        assert ff.dtype == np.float32 and dd.dtype == np.float64
        for i, r in enumerate(refs):
            assert ff[i] == np.float32(r.next_float())
            assert dd[i] == r.next_double()
        assert np.all((ff >= 0) & (ff < 1)) and np.all((dd >= 0) & (dd < 1))


def test_many_floats_cover_the_unit_interval():
    f = kl.PCG32(100_000).next_float32().numpy()
    assert f.min() >= 0.0 and f.max() < 1.0
    assert abs(f.mean() - 0.5) < 0.01
    counts, _ = np.histogram(f, bins=10, range=(0, 1))
    assert counts.min() > 9000 and counts.max() < 11000


@pytest.mark.parametrize("bound", [1, 6, 1000, 0x80000001, 0xFFFFFFF0])
def test_bounded_matches_the_reference_rejection(bound):
    lanes = 23
    rng = kl.PCG32(lanes)
    refs = default_references(lanes)
    for _ in range(20):
        x = rng.next_uint32_bounded(kl.UInt32(bound))
        kl.eval(x, rng)
        got = x.numpy()
        np.testing.assert_array_equal(got, [r.bounded(bound) for r in refs])
        assert np.all(got < bound)
    np.testing.assert_array_equal(rng.state.numpy(), np.array([r.state for r in refs], np.uint64))


def test_bounded_with_one_bound_per_lane_and_a_plain_int():
    lanes = 12
    bounds = [i + 1 if i % 2 else 0x80000000 + i + 1 for i in range(lanes)]
    rng = kl.PCG32(lanes)
    refs = default_references(lanes)
    bound = kl.UInt32(np.array(bounds, np.uint32))
    for _ in range(15):
        np.testing.assert_array_equal(rng.next_uint32_bounded(bound).numpy(),
                                      [r.bounded(b) for r, b in zip(refs, bounds)])
    got = rng.next_uint32_bounded(6).numpy()  # a Python int converts
    np.testing.assert_array_equal(got, [r.bounded(6) for r in refs])


def test_bounded_zero_raises():
    """[0, 0) holds no integer: a plain 0 and a zero in any lane raise (they used to give
    unbounded draws)."""
    rng = kl.PCG32(4)
    with pytest.raises(ValueError, match="a bound is 0"):
        rng.next_uint32_bounded(0)
    with pytest.raises(ValueError, match="every bound must be positive"):
        rng.next_uint32_bounded(kl.UInt32([5, 0, 3, 2]))
    assert np.all(rng.next_uint32_bounded(kl.UInt32([5, 1, 3, 2])).numpy() < [5, 1, 3, 2])


def test_bounded_has_no_modulo_bias():
    # With bound 2^31 + 1, a plain modulo would put 2/3 of the draws below 2^31 - 1.
    bound = 0x80000001
    x = kl.PCG32(200_000).next_uint32_bounded(kl.UInt32(bound)).numpy().astype(np.int64)
    assert x.max() < bound
    assert abs(np.mean(x < bound // 2) - 0.5) < 0.01
    # Small bounds: every value about equally often.
    counts = np.bincount(kl.PCG32(60_000).next_uint32_bounded(kl.UInt32(6)).numpy(), minlength=6)
    assert len(counts) == 6
    assert counts.min() > 9500 and counts.max() < 10500


@pytest.mark.parametrize("draw", ["next_uint32", "next_float32", "next_float64"])
def test_masked_draws_advance_only_active_lanes(backend, draw):
    lanes = 10
    rng = kl.PCG32(lanes)
    refs = default_references(lanes)
    even = (kl.arange(kl.UInt32, lanes) & 1) == 0
    before = rng.state.numpy().copy()
    masked = getattr(rng, draw)(even)
    kl.eval(masked, rng)
    state = rng.state.numpy()
    np.testing.assert_array_equal(state[1::2], before[1::2])
    assert np.all(state[::2] != before[::2])
    for i in range(0, lanes, 2):
        refs[i].next()
    np.testing.assert_array_equal(rng.next_uint32().numpy(), [r.next() for r in refs])


def test_masked_draw_returns_the_current_output_for_inactive_lanes():
    a, b = kl.PCG32(6), kl.PCG32(6)
    masked = a.next_uint32(kl.Bool([True, False] * 3)).numpy()
    np.testing.assert_array_equal(masked, b.next_uint32().numpy())


def test_seed_restarts_and_resizes():
    rng = kl.PCG32(4)
    rng.next_uint32()
    rng.seed(3, kl.UInt64(42), kl.UInt64(54))
    assert rng.size() == 3
    for expected in DEMO_OUTPUTS:
        np.testing.assert_array_equal(rng.next_uint32().numpy(), [expected] * 3)
    seqs = np.array([1, 2, 3, 4, 5], np.uint64)
    rng.seed(5, kl.UInt64(7), kl.UInt64(seqs))
    refs = [Reference(7, int(q)) for q in seqs]
    np.testing.assert_array_equal(rng.next_uint32().numpy(), [r.next() for r in refs])


def test_state_and_inc_attributes():
    rng = kl.PCG32(6)
    refs = default_references(6)
    assert isinstance(rng.state, kl.UInt64) and isinstance(rng.inc, kl.UInt64)
    np.testing.assert_array_equal(rng.inc.numpy(), np.array([r.inc for r in refs], np.uint64))
    assert np.all(rng.inc.numpy() & 1 == 1)
    np.testing.assert_array_equal(rng.state.numpy(), np.array([r.state for r in refs], np.uint64))
    # Copying state and inc into another generator continues the same streams.
    rng.next_uint32()
    copy = kl.PCG32(6, kl.UInt64(0), kl.UInt64(0))
    copy.state, copy.inc = rng.state, rng.inc
    np.testing.assert_array_equal(copy.next_uint32().numpy(), rng.next_uint32().numpy())
    np.testing.assert_array_equal(copy.next_uint32().numpy(), rng.next_uint32().numpy())


def test_a_saved_state_rewinds_the_generator():
    rng = kl.PCG32(4)
    saved = rng.state  # a value, as `UInt64 saved = rng.state;` in C++
    saved_values = saved.numpy().copy()
    first = rng.next_uint32().numpy().copy()
    np.testing.assert_array_equal(saved.numpy(), saved_values)  # drawing must not change `saved`
    rng.state = saved
    np.testing.assert_array_equal(rng.next_uint32().numpy(), first)


def test_negative_size_is_a_value_error():
    with pytest.raises(ValueError):
        kl.PCG32(-1)
    with pytest.raises(ValueError):
        kl.PCG32(2).seed(-3, kl.UInt64(1), kl.UInt64(1))
