"""How a number is written in a record key: the short form where it reads back exactly,
so that two distinct values never share one key."""

from __future__ import annotations


def key_number(value: float) -> str:
    """``value`` as written in a record key: the short ``{:g}`` form where it reads back
    as the same float (the keys written before, ``p=0.5``), else the exact ``repr``, so
    that two distinct grid values (0.5 and 0.5000001) never share one key.

    >>> key_number(0.5), key_number(0.5000001), key_number(1e-07), key_number(123456789.0)
    ('0.5', '0.5000001', '1e-07', '123456789.0')
    """
    short = f"{value:g}"
    return short if float(short) == value else repr(float(value))
