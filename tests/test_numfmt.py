import random

import pytest
from sympy import E, Rational, exp, sqrt

from symattn.numbers.decimals import decimal_places, to_decimal
from symattn.numbers.display import format_number, format_numbers
from symattn.numbers.significant import significant


@pytest.mark.parametrize(
    ("value", "places"),
    [(Rational(1, 8), 3), (Rational(1158, 1000), 3), (Rational(1, 3), None), (Rational(5), 0), (sqrt(2), None)],
)
def test_decimal_places(value, places):
    assert decimal_places(value) == places


@pytest.mark.parametrize(
    ("value", "digits", "text", "exact"),
    [
        (Rational("0.92"), 4, "0.92", True),
        (Rational("1.6976"), 4, "1.6976", True),
        (Rational("0.12345"), 4, "0.1235", False),  # half-up on an exact tie
        (Rational("-0.12345"), 4, "-0.1235", False),  # ties go away from zero
        (Rational(1, 3), 4, "0.3333", False),
        (Rational(2, 3), 2, "0.67", False),
        (Rational(-1, 100000), 4, "0.0000", False),  # no negative zero
        (Rational(579, 500) / sqrt(2), 4, "0.8188", False),
        (exp(1), 6, "2.718282", False),
        (Rational(5), 4, "5", True),
        (exp(Rational(3453, 100)), 4, "991262005222771.3177", False),  # below 10^15: every digit
        (exp(Rational(3454, 100)), 4, r"1.0012 \times 10^{15}", False),  # from 10^15 on: a power of ten
        (-Rational(10**20, 3), 2, r"-3.33 \times 10^{19}", False),
        (Rational(10**20), 4, "100000000000000000000", True),  # exact: all its digits
        (999994 * 10**15 + Rational(1, 3), 4, r"9.9999 \times 10^{20}", False),
        (999995 * 10**15 + Rational(1, 3), 4, r"1.0000 \times 10^{21}", False),  # the mantissa rounds up to 10
    ],
)
def test_format_number(value, digits, text, exact):
    number = format_number(value, digits)
    assert (number.text, number.exact) == (text, exact)


def test_huge_exponentials_are_a_mantissa_times_a_power_of_ten():
    """e^{126373.53} has 54,884 digits: the page shows 4 decimals of its mantissa, the answers 30 significant digits
    with an exponent; both from a few dozen digits, checked against mpmath's own log10."""
    import mpmath

    score = Rational(12637353, 100)
    with mpmath.workdps(60):
        log10 = mpmath.mpf(12637353) / 100 / mpmath.ln(10)
        exponent = int(mpmath.floor(log10))
        mantissa = mpmath.power(10, log10 - exponent)
        expected = mpmath.nstr(mantissa, 30, strip_zeros=False)
    assert format_number(exp(score)).text == rf"{mpmath.nstr(mantissa, 5, strip_zeros=False)} \times 10^{{{exponent}}}"
    assert significant(exp(score)) == f"{expected}E+{exponent}"
    assert significant(exp(-score)).endswith(f"E-{exponent + 1}")
    assert format_number(exp(-score)).text == "0.0000"  # tiny: rounded to the decimals shown, as every weight is
    assert significant(Rational(1, 3 * 10**120), 5) == "3.3333E-121"
    assert significant(Rational(10**99), 5) == "1" + "0" * 99  # an exact decimal keeps all its digits


def test_padding_to_written_decimals():
    assert format_number(Rational("0.8"), 4, 3).text == "0.800"
    assert format_number(Rational("0.6"), 4, 2).text == "0.60"
    # written with more decimals than the budget: still shown exactly, as the user wrote it
    assert format_number(Rational("0.123456"), 4, 6).text == "0.123456"


def test_uniform_rows_share_decimals():
    row = format_numbers([Rational("0.893"), Rational("0.923"), Rational("0.6962")], 4, uniform=True)
    assert [n.text for n in row] == ["0.8930", "0.9230", "0.6962"]
    mixed = format_numbers([Rational("1.158"), Rational("1.6976")], 4, uniform=False)
    assert [n.text for n in mixed] == ["1.158", "1.6976"]


def test_irrational_rounding_uses_enough_precision():
    # e^10 = 22026.465794806716516957900645...
    assert str(to_decimal(E**10, 8)) == "22026.46579481"
    assert significant(E, 30).startswith("2.71828182845904523536028747135")
    assert significant(Rational(1, 8), 30) == "0.125" + "0" * 27
    assert significant(Rational(1, 3), 30) == "0." + "3" * 30
    assert significant(Rational(-2, 3), 5) == "-0.66667"
    assert significant(Rational(123456789, 1000), 5) == "123456.789"  # an exact decimal keeps all its digits
    assert significant(0, 3) == "0.00"


def test_significant_approximation_spells_numbers_as_the_decimal_route_does():
    """The integer rounding of an mpmath number gives the text of the Decimal route (80 digits, then half-up to
    30 significant digits), including the carries to the next power of ten and negative numbers."""
    import random
    from decimal import ROUND_HALF_UP, Decimal, localcontext

    import mpmath

    from symattn.numbers.significant import significant_approximation

    def reference(x: mpmath.mpf, figures: int = 30) -> str:
        number = Decimal(mpmath.nstr(x, figures + 50, strip_zeros=False))
        with localcontext() as context:
            context.prec = 100
            quantum = Decimal(1).scaleb(number.adjusted() - figures + 1)
            rounded = number.quantize(quantum, rounding=ROUND_HALF_UP)
            return format(rounded, "E" if abs(rounded.adjusted()) >= 100 else "f")

    rng = random.Random(6)
    with mpmath.workdps(100):
        values = [mpmath.exp(mpmath.mpf(rng.randint(-10**6, 10**6)) / 10**5) * mpmath.mpf(10) ** rng.randint(-60, 60)
                  for _ in range(3000)]
        values += [mpmath.mpf(10) ** k * factor for k in [*range(-45, 45), *range(-103, -96), *range(96, 103)]
                   for factor in (1, 1 - mpmath.mpf(10) ** -35, 1 - mpmath.mpf(10) ** -85)]
        values += [mpmath.mpf("9.99999999999999999999999999999996"), mpmath.mpf(1) / 3, mpmath.mpf("0.25")]
    for x in values:
        for signed in (x, -x):
            assert significant_approximation(signed) == reference(signed), signed


def test_fraction_exponential_latex_is_sympys_latex_of_the_exponential():
    from symattn.engine import exponential
    from symattn.numbers.exact_latex import exact_latex, fraction_exponential_latex

    for value in (Rational(0), Rational(1), Rational(-1), Rational(5), Rational(-3, 4), Rational(7, 2),
                  Rational(-123457, 80000)):
        text = exact_latex(exponential(value), decimals=False)
        assert fraction_exponential_latex(int(value.p), int(value.q)) == text


def test_softmax_latex_from_signed_coefficients_is_the_joined_sum():
    """The outputs' exact forms written from the signed coefficients equal the sums written out and joined
    (" + ", then "+ -" as "- "): negative, unit, zero and first coefficients, masked keys, and the
    coefficients and terms that hold a "+" of their own or start with "-" (written out as before)."""
    import random

    from symattn.numbers.exact_latex import Coefficients, softmax_latex

    def joined(terms):  # a + b - c, as the sums were written before the coefficients were kept
        return " + ".join(terms).replace("+ -", "- ")

    def written_out(terms, columns):
        # a coefficient times e^0 = 1 is the coefficient alone ("3", not "3 1")
        sums = [joined([f.rstrip() if t == "1" and f else f + t for f, t in zip(column, terms, strict=True)
                        if f is not None and t is not None])
                for column in columns]
        return [rf"\frac{{{text or '0'}}}{{Z}}" for text in sums]

    rng = random.Random(29)
    factors = [None, "", "3 ", "- 3 ", r"\frac{1}{2} ", r"- \frac{7}{4} ", "-2 "]
    odd_factors = [r"\left(1 + \sin{1}\right) ", r"\left(- \sqrt{2} + 1\right) "]
    terms = [None, "1", "e", r"e^{\frac{3}{4}}", r"e^{- \frac{1}{8}}", "e^{-1}"]
    odd_terms = [r"e^{1 + \sin{1}}", r"e^{- \sqrt{2} + 1}"]
    for trial in range(400):
        n, d = rng.randint(1, 6), rng.randint(1, 4)
        pool = factors + (odd_factors if trial % 4 == 0 else [])
        columns = [[rng.choice(pool) for _ in range(n)] for _ in range(d)]
        row = [rng.choice(terms + (odd_terms if trial % 5 == 0 else [])) for _ in range(n)]
        coefficients = Coefficients(columns)
        assert (coefficients.signed is None) == any(f and "+" in f for column in columns for f in column)
        assert softmax_latex(row, coefficients)[2] == written_out(row, columns)


def test_surd_latex_is_sympys_latex():
    """(p/q)·√m written from its integers, as SymPy prints it: signs, unit coefficients, integers, zero."""
    from sympy import latex

    from symattn.numbers.exact_latex import exponential_latex, surd_exponential_latex, surd_latex

    rng = random.Random(11)
    for m in (1, 2, 3, 5, 6, 7, 10, 30):  # m = 1: the rational itself
        for _ in range(200):
            value = Rational(rng.choice([0, 1, -1, rng.randint(-10**9, 10**9)]), rng.choice([1, rng.randint(1, 10**5)]))
            p, q = int(value.p), int(value.q)
            assert surd_latex(p, q, m) == latex(value * sqrt(m))
            assert surd_exponential_latex(p, q, m) == exponential_latex(value * sqrt(m))


def test_exponents_beyond_the_decimal_contexts_limit():
    """e^{10^7} has 4,342,945 digits: Python's default decimal context stops at an exponent of 999,999."""
    import mpmath

    with mpmath.workdps(40):
        log10 = mpmath.mpf(10**7) / mpmath.ln(10)
        exponent = int(mpmath.floor(log10))
        mantissa = mpmath.nstr(mpmath.power(10, log10 - exponent), 5, strip_zeros=False)
    assert format_number(exp(Rational(10**7))).text == rf"{mantissa} \times 10^{{{exponent}}}"
    assert significant(exp(Rational(10**7))).endswith(f"E+{exponent}")
    assert significant(exp(Rational(-10**7))).endswith(f"E-{exponent + 1}")


def test_significant_surd_is_the_correctly_rounded_value_of_a_times_root_m():
    """(p/q)·√m to 30 significant digits from integers: equal to mpmath at 200 digits rounded once, at every size."""
    import mpmath

    from symattn.numbers.significant import significant_surd

    rng = random.Random(17)
    for _ in range(3000):
        p = rng.choice([-1, 1]) * rng.randint(1, 10 ** rng.randint(0, 40))
        q, m = rng.randint(1, 10 ** rng.randint(0, 40)), rng.choice([2, 3, 8, 10, 32, 99, 10**6 + 3])
        with mpmath.workdps(200):
            value = mpmath.mpf(p) / q * mpmath.sqrt(m)
            expected = significant(Rational(p, q) * sqrt(m))
        text = significant_surd(p, q, m)
        assert text == expected, (p, q, m)
        with mpmath.workdps(200):
            assert abs(mpmath.mpf(text.replace("E", "e")) - value) <= abs(value) * mpmath.mpf(10) ** -29


def test_rounded_approximation_is_the_decimal_route():
    """to_decimal's integer rounding of a result's approximation gives the Decimal route's number (engine.decimal's
    digits, then half-up), or defers to it (None) next to a tie and for values the route would evaluate anew; the
    same for magnitude()'s size."""
    import random
    from decimal import ROUND_HALF_UP, Decimal

    import mpmath

    from symattn.engine import WORKING_DIGITS
    from symattn.engine import decimal as approx_decimal
    from symattn.numbers.decimals import binary_magnitude, context, rounded_approximation

    def reference(x: mpmath.mpf, digits: int) -> Decimal:
        size = approx_decimal(x, 15).adjusted()
        if size < -digits - 1:
            return Decimal(0).scaleb(-digits)
        figures = max(0, size) + digits + 40
        with context(figures + 10):
            rounded = approx_decimal(x, figures).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
        return rounded.copy_abs() if rounded.is_zero() else rounded

    rng = random.Random(7)
    with mpmath.workdps(WORKING_DIGITS + 10):
        values = [mpmath.exp(mpmath.mpf(rng.randint(-10**6, 10**6)) / 10**5) * mpmath.mpf(10) ** rng.randint(-20, 8)
                  for _ in range(1000)]
        values += [(rng.randint(0, 10**8) + mpmath.mpf(1) / 2) / mpmath.mpf(10) ** d
                   + rng.choice([-1, 1]) * mpmath.mpf(10) ** (-d - rng.randint(30, 60)) for d in range(14)
                   for _ in range(20)]
    deferred = 0
    for x in values:
        for signed in (x, -x):
            size = binary_magnitude(signed)
            assert size is None or size == approx_decimal(signed, 15).adjusted(), signed  # magnitude()'s estimate
            for digits in (0, 2, 4, 12):
                rounded = rounded_approximation(signed, digits)
                if rounded is None:
                    deferred += 1
                else:
                    assert str(rounded) == str(reference(signed, digits)), (signed, digits)
    assert deferred < len(values)  # most are rounded in integers
