import math

import numpy as np
import pytest

from bounds.validation import check_choice, check_finite_array, check_int, check_real


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
