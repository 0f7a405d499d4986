import math
from fractions import Fraction

import numpy as np
import pytest

from pruneleak.bounds._vector import int_array, real_array
from pruneleak.bounds.validation import (
    check_bool,
    check_choice,
    check_finite_array,
    check_int,
    check_real,
)


def test_check_real_accepts_and_converts():
    value = check_real("p", np.float32(0.25), func="f", low=0, high=1)
    assert value == 0.25 and type(value) is float


@pytest.mark.parametrize(
    ("value", "kwargs", "fragment"),
    [
        (1.3, {"low": 0, "high": 1}, "must be in [0, 1]. Got 1.3 instead."),
        (0.0, {"low": 0, "low_inclusive": False}, "must be in (0, inf). Got 0.0"),
        (math.nan, {}, "Got nan instead."),
        (math.inf, {}, "Got inf instead."),
        ("0.5", {}, "must be a real number"),
        (True, {}, "must be a real number"),
    ],
)
def test_check_real_rejects(value, kwargs, fragment):
    with pytest.raises(ValueError, match="The 'p' parameter of f") as info:
        check_real("p", value, func="f", **kwargs)
    assert fragment in str(info.value)


@pytest.mark.parametrize("value", [0, -3, 2.0, "1", None])
def test_check_int_rejects(value):
    with pytest.raises(ValueError, match="The 'B' parameter of g"):
        check_int("B", value, func="g", low=1)


def test_check_int_accepts_numpy_integer():
    assert check_int("B", np.int64(4), func="g", low=1) == 4


def test_check_choice():
    assert check_choice("unit", "bits", func="h", choices=("bits", "nats")) == "bits"
    with pytest.raises(ValueError, match=r"must be one of 'bits', 'nats'\. Got 'dits'"):
        check_choice("unit", "dits", func="h", choices=("bits", "nats"))


def test_check_finite_array():
    np.testing.assert_array_equal(check_finite_array("x", [[1, 2]], func="k", ndim=2), [[1, 2]])
    with pytest.raises(ValueError, match=r"2-dimensional array\. Got shape"):
        check_finite_array("x", [1, 2], func="k", ndim=2)
    with pytest.raises(ValueError, match="1 NaN or infinite entries"):
        check_finite_array("x", [1, np.nan], func="k")


# --- Hardening (issue 13) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (10**400, "beyond the largest float, 1.8e308"),  # float() would raise OverflowError
        (-(10**400), "beyond the largest float, 1.8e308"),
        (Fraction(10**400, 3), "beyond the largest float, 1.8e308"),
        (np.complex128(1 + 2j), "must be a real number"),  # float() would drop 2j silently
        (np.array(0.5), "must be a real number"),
    ],
)
def test_check_real_refuses_overflow_and_complex(value, fragment):
    with pytest.raises(ValueError, match="The 'x' parameter of f") as info:
        check_real("x", value, func="f")
    assert fragment in str(info.value)
    assert len(str(info.value)) < 250  # a 400-digit integer is shortened in the message


def test_check_real_takes_fractions_and_numpy_floats():
    assert check_real("x", Fraction(1, 4), func="f") == 0.25
    assert check_real("x", np.float16(0.5), func="f", low=0, high=1) == 0.5


@pytest.mark.parametrize("value", [np.array(["bits"]), np.array(["bits", "x"]), ["bits"], {}])
def test_check_choice_refuses_containers(value):
    # An array used to slip through (array(['bits']) == 'bits' is truthy) or to raise numpy's
    # "truth value of an array is ambiguous".
    with pytest.raises(ValueError, match="The 'unit' parameter of h must be one of 'bits'"):
        check_choice("unit", value, func="h", choices=("bits", "nats"))


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("abc", "dtype <U3"),
        (["1", "2"], "dtype <U1"),  # strings were parsed as numbers
        ([1 + 1j], "dtype complex128"),  # the imaginary part was dropped
        (None, "Got None among them"),  # became a NaN
        ([[1.0], [1.0, 2.0]], "rectangular array"),
        ({"a": 1}, "Got {'a': 1} among them"),
        ([1, 10**400], "beyond the largest float"),
        (np.array(["2020-01-01"], dtype="datetime64[D]"), "dtype datetime64[D]"),
    ],
)
def test_check_finite_array_refuses_non_numbers(value, fragment):
    with pytest.raises(ValueError, match="The 'x' parameter of k") as info:
        check_finite_array("x", value, func="k")
    assert fragment in str(info.value)


def test_check_finite_array_converts_numbers():
    source = np.array([1, 2], dtype=np.int32)
    out = check_finite_array("x", source, func="k")
    assert out.dtype == float and out.tolist() == [1.0, 2.0]
    mixed = check_finite_array("x", np.array([Fraction(1, 2), 3], dtype=object), func="k")
    assert mixed.tolist() == [0.5, 3.0]
    assert check_finite_array("x", [True, False], func="k").tolist() == [1.0, 0.0]


def test_check_bool():
    assert check_bool("flag", np.bool_(False), func="f") is False
    for value in ("yes", 1, None, np.array([True])):
        with pytest.raises(ValueError, match="The 'flag' parameter of f must be True or False"):
            check_bool("flag", value, func="f")


def test_bounds_beyond_the_largest_float_are_shown_in_the_message():
    # Formatting the interval [0, 10**400] with :g raised OverflowError.
    with pytest.raises(ValueError, match=r"must be in \[0, 1000000") as info:
        check_int("n", -1, func="f", low=0, high=10**400)
    assert "(401 characters)" in str(info.value)
    assert check_int("n", 10**400, func="f", low=10**400, high=10**400) == 10**400


def test_vector_helpers_refuse_wrapping_complex_and_ragged_input():
    # bounds._vector, the element-wise layer over these checks: uint64 above int64 wrapped to
    # a negative int64, a complex array lost its imaginary part, ragged input gave numpy's
    # message naming nothing.
    with pytest.raises(ValueError, match=r"'d' parameter of f .*Got 18446744073709551615"):
        int_array("d", np.array([5, 2**64 - 1], dtype=np.uint64), func="f", low=1)
    with pytest.raises(ValueError, match="'p' parameter of f must be real numbers"):
        real_array("p", np.array([0.5 + 1j]), func="f")
    for helper in (real_array, int_array):
        with pytest.raises(ValueError, match="'x' parameter of f"):
            helper("x", [[1], [1, 2]], func="f")
    assert int_array("d", np.array([5], dtype=np.uint64), func="f").tolist() == [5]
