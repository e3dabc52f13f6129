from decimal import Decimal

import pytest
from sympy import Rational

from symattn import SpecError
from symattn.spec.numbers import parse_number


@pytest.mark.parametrize(
    ("raw", "value", "places"),
    [
        ("0.1", Rational(1, 10), 1),
        ("-0.30", Rational(-3, 10), 2),
        ("1/3", Rational(1, 3), None),  # a fraction is shown as a fraction
        (Decimal("0.800"), Rational(4, 5), 3),
        (" 2 ", Rational(2), 0),
        (7, Rational(7), 0),
        ("1e-3", Rational(1, 1000), 3),
        (".5", Rational(1, 2), 1),
        ("-3/-4", Rational(3, 4), None),
    ],
)
def test_numbers_are_parsed_exactly_from_their_text(raw, value, places):
    assert parse_number(raw, "X[0][0]") == (value, places)


def test_point_one_is_one_tenth_not_the_float():
    number, _ = parse_number("0.1", "x")
    assert number == Rational(1, 10)
    assert number != Rational(0.1)  # the binary float is 3602879701896397/36028797018963968


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("abc", "expected a number such as 0.8, -1.25 or 1/3, got 'abc'"),
        (0.1, "got a binary float"),
        (True, "expected a number, got true"),
        (Decimal("NaN"), "expected a finite number"),
        ("inf", "expected a number such as"),
        ("1/0", "division by zero"),
        (None, "expected a number, got NoneType"),
    ],
)
def test_bad_numbers_name_the_field(raw, message):
    with pytest.raises(SpecError) as caught:
        parse_number(raw, "sections[0].X[1][0]")
    assert str(caught.value).startswith("sections[0].X[1][0]: ")
    assert message in str(caught.value)
