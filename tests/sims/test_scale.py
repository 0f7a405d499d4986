"""pruneleak.sims.core.scale: the scale every notebook reads from $PRUNELEAK_SCALE."""

import pytest

from pruneleak.sims.core.scale import SCALES, current_scale


def test_the_default_scale_is_quick(monkeypatch):
    monkeypatch.delenv("PRUNELEAK_SCALE", raising=False)
    assert current_scale() == "quick"


@pytest.mark.parametrize("scale", SCALES)
def test_a_named_scale_is_read(monkeypatch, scale):
    monkeypatch.setenv("PRUNELEAK_SCALE", scale)
    assert current_scale() == scale


@pytest.mark.parametrize("value", ["Paper", "full", ""])
def test_another_value_is_refused_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("PRUNELEAK_SCALE", value)
    with pytest.raises(ValueError, match=r"'PRUNELEAK_SCALE'.*'quick'.*'paper'"):
        current_scale()
