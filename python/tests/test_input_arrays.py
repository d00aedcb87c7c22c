"""How input arrays reach collage: read in place when C-contiguous and of the input's dtype,
copied into C order when laid out otherwise, refused with collage's message when of
another dtype."""

import numpy as np
import pytest

import collage


@pytest.fixture(scope="module")
def session(tiny_model):
    return collage.InferenceSession(tiny_model.path)


@pytest.fixture(scope="module")
def expected(session, tiny_input):
    return session.run(None, {"x": tiny_input})


def _assert_same(outputs, expected):
    for a, b in zip(outputs, expected):
        np.testing.assert_array_equal(a, b)


def test_a_read_only_array_is_read_in_place(session, tiny_input, expected):
    frozen = tiny_input.copy()
    frozen.flags.writeable = False
    _assert_same(session.run(None, {"x": frozen}), expected)


def test_a_transposed_array_is_read_in_its_logical_order(session, tiny_input, expected):
    # Stored as 16x16x4x1, seen as 1x4x16x16: not C-contiguous.
    transposed = np.ascontiguousarray(tiny_input.transpose(3, 2, 1, 0)).transpose(3, 2, 1, 0)
    assert not transposed.flags.c_contiguous
    _assert_same(session.run(None, {"x": transposed}), expected)


def test_a_strided_slice_and_a_fortran_array_are_read_correctly(session, tiny_input, expected):
    wide = np.zeros((1, 4, 16, 32), np.float32)
    wide[..., ::2] = tiny_input
    _assert_same(session.run(None, {"x": wide[..., ::2]}), expected)
    _assert_same(session.run(None, {"x": np.asfortranarray(tiny_input)}), expected)


def test_a_big_endian_array_is_read_by_value(session, tiny_input, expected):
    swapped = tiny_input.astype(">f4")
    _assert_same(session.run(None, {"x": swapped}), expected)


def test_the_input_array_is_left_unchanged(session, tiny_input):
    before = tiny_input.copy()
    session.run(None, {"x": tiny_input})
    np.testing.assert_array_equal(tiny_input, before)


def test_another_dtype_is_refused_not_converted(session, tiny_input):
    with pytest.raises(collage.InvalidArgumentError,
                       match=r"input 'x' has dtype float64, the model expects float32"):
        session.run(None, {"x": tiny_input.astype(np.float64)})


def test_a_dtype_collage_has_no_type_for_is_refused(session, tiny_input):
    with pytest.raises(collage.InvalidArgumentError,
                       match=r"input 'x' has numpy dtype complex64, which collage has no type for"):
        session.run(None, {"x": tiny_input.astype(np.complex64)})
    with pytest.raises(collage.InvalidArgumentError, match=r"numpy dtype object"):
        session.run(None, {"x": np.array([None], dtype=object)})
