"""The position-wise feed-forward network, exactly: h = x·W_1 + b_1, a = φ(h) entry by entry, f = a·W_2 + b_2 (SwiGLU:
a = SiLU(x·W_1 + b_1) ⊙ (x·W_3 + b_3), as LLaMA). ReLU keeps rationals rational; GELU, its tanh form and SiLU stay
exact SymPy forms (erf, tanh, e^x), and every irrational value is evaluated once with mpmath and filed in the
result's Numbers, so that no document evaluates it again."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath
from mpmath.libmp import prec_to_dps
from sympy import Add, Expr, ImmutableMatrix, Integer, Mul, Pow, Rational, Tuple, erf, exp, pi, sqrt, tanh

from ...engine.fast import new_expr, sorted_add, sorted_mul
from ...engine.matrices import as_matrix, entries, projection
from ...engine.numbers import PRECISION, WORKING_DIGITS, Numbers
from ...engine.weighted import Parts as Parts

ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu", "swiglu")
# GELU's tanh approximation, as PyTorch's approximate="tanh": x/2·(1 + tanh(√(2/π)(x + 0.044715x³)))
GELU_TANH_CUBIC = Rational(44715, 10**6)
_ROOT_2, _ROOT_PI = sqrt(2), 1 / sqrt(pi)  # √2 and 1/√π, as the arguments of erf and tanh are written
# The bits an output sum may lose to cancellation before it is evaluated again at more bits: the activations carry
# PRECISION bits (WORKING_DIGITS + 10 digits), of which WORKING_DIGITS must survive the sum.
_SPARE_BITS = PRECISION - int(WORKING_DIGITS * 3.33) - 8


@dataclass(frozen=True)
class FeedForward:
    """The network applied to each row of X: `hidden` x·W_1 + b_1 (SwiGLU: the gate), `up` x·W_3 + b_3 (SwiGLU
    only), `activated` φ(hidden) (SwiGLU: SiLU(gate) ⊙ up), `output` activated·W_2 + b_2, all exact; `known` the
    numbers of their irrational entries; `zeroed` per row the entries ReLU sets to 0 (those with h < 0)."""

    activation: str
    hidden: ImmutableMatrix
    up: ImmutableMatrix | None
    activated: ImmutableMatrix
    output: ImmutableMatrix
    known: Numbers
    zeroed: tuple[int, ...]

    @property
    def rational(self) -> bool:
        """Whether every activated entry (and so every output) is rational: ReLU of rational inputs."""
        return all(v.is_Rational for v in self.activated)


def affine(X: ImmutableMatrix, W: ImmutableMatrix, b: ImmutableMatrix | None) -> ImmutableMatrix:
    """X·W + b, b added to every row (None: no bias)."""
    product = as_matrix(projection(X, W))
    if b is None:
        return product
    return ImmutableMatrix(X.rows, W.cols, lambda i, j: product[i, j] + b[0, j])


Split = tuple[Expr, tuple[tuple[Expr, Expr], ...]]  # constant, (coefficient, atom) pairs


def activation_form(name: str, h: Expr, up: Expr | None = None) -> Expr:
    """φ(h) as an exact SymPy form (SwiGLU: SiLU(h)·up)."""
    return sum_of(*activation_parts(name, h, up))


def sum_of(constant: Expr, terms) -> Expr:
    """constant + Σ coefficient · atom (rational coefficients, distinct atoms) in SymPy's canonical form, sorted
    rather than flattened: sixteen thousand erf terms in 16 × 16 outputs otherwise cost seconds."""
    parts = [atom if k == 1 else sorted_mul([k, atom]) for k, atom in terms if k != 0]
    if constant != 0 or not parts:
        parts.append(constant)
    return parts[0] if len(parts) == 1 else sorted_add(parts)


def activation_parts(name: str, h: Expr, up: Expr | None = None) -> Split:
    """φ(h) = constant + Σ coefficient · atom, the transcendental atoms (erf, tanh, 1/(1 + e^{−h})) apart with
    rational coefficients when h (and up) are rational: a sum of many activations then adds coefficients, where
    SymPy's sum of sums would distribute and sort every term again. Other h: the whole form, coefficient 1."""
    if name == "relu":
        return (h if _sign(h) > 0 else Integer(0)), ()
    if not (h.is_Rational and (up is None or up.is_Rational)):
        return Integer(0), ((Integer(1), _form(name, h, up)),)
    if h == 0:
        return Integer(0), ()
    sign = 1 if h > 0 else -1  # erf and tanh are odd: their atoms are of |h|, as SymPy writes them
    if name == "gelu":  # x·Φ(x) = x/2 + x/2·erf(x/√2), Φ the standard normal distribution function
        return h / 2, ((sign * h / 2, erf(Mul(abs(h) / 2, _ROOT_2, evaluate=False), evaluate=False)),)
    if name == "gelu_tanh":
        y = abs(h + GELU_TANH_CUBIC * h**3)
        return h / 2, ((sign * h / 2, tanh(Mul(y, _ROOT_2, _ROOT_PI, evaluate=False), evaluate=False)),)
    sigma = Pow(Add(1, exp(-h, evaluate=False), evaluate=False), -1, evaluate=False)  # σ(h) = 1/(1 + e^{−h})
    return Integer(0), ((h if name == "silu" else h * up, sigma),)


def _form(name: str, h: Expr, up: Expr | None) -> Expr:
    """φ(h) of any exact h as one SymPy form."""
    if name == "gelu":
        return h / 2 * (1 + erf(h / sqrt(2)))
    if name == "gelu_tanh":
        return h / 2 * (1 + tanh(sqrt(2 / pi) * (h + GELU_TANH_CUBIC * h**3)))
    silu = h / (1 + exp(-h))
    return silu if name == "silu" else silu * up


def activation_number(name: str, h: mpmath.mpf, up: mpmath.mpf | None = None) -> mpmath.mpf:
    """φ(h) at mpmath's current precision, in forms that do not cancel: 1 + erf(−y) = erfc(y), 1 + tanh(y) =
    2/(1 + e^{−2y}) (h = −30 keeps its digits)."""
    if name == "relu":
        return h if h > 0 else mpmath.mpf(0)
    if name == "gelu":
        return h / 2 * mpmath.erfc(-h / mpmath.sqrt(2))
    if name == "gelu_tanh":
        y = mpmath.sqrt(2 / mpmath.pi) * (h + _mpf(GELU_TANH_CUBIC) * h**3)
        return h / (1 + mpmath.exp(-2 * y))
    silu = h / (1 + mpmath.exp(-h))
    return silu if name == "silu" else silu * up


def feed_forward(X: ImmutableMatrix, W_1: ImmutableMatrix, b_1: ImmutableMatrix | None, W_2: ImmutableMatrix,
                 b_2: ImmutableMatrix | None, activation: str = "relu", W_3: ImmutableMatrix | None = None,
                 b_3: ImmutableMatrix | None = None, rows: tuple[int, ...] | None = None) -> FeedForward:
    """The network on every row of X (or on `rows` of it, in their order)."""
    if rows is not None:
        X = ImmutableMatrix([list(X.row(i)) for i in rows])
    hidden = affine(X, W_1, b_1)
    up = affine(X, W_3, b_3) if activation == "swiglu" else None
    known = Numbers()
    parts = [[activation_parts(activation, h, None if up is None else up[i, j]) for j, h in enumerate(row)]
             for i, row in enumerate(entries(hidden))]
    activated = ImmutableMatrix([[sum_of(c, terms) for c, terms in row] for row in parts])
    zeroed = tuple(sum(1 for h in row if activation == "relu" and _sign(h) < 0) for row in entries(hidden))
    if all(v.is_Rational for v in activated):
        output = affine(activated, W_2, b_2)
    else:
        output = _irrational_output(activation, hidden, up, activated, W_2, b_2, known)
    return FeedForward(activation, hidden, up, activated, output, known, zeroed)


class ActivatedSum(Expr):
    """One output entry Σ_j a_j w_j + b with irrational activations a_j, kept as its parts (the row's a_j and the
    column of W_2, each one shared Tuple) and written out only when asked: for printing, evalf and doit()."""

    is_commutative = True

    def __new__(cls, row: Tuple, column: Tuple, bias: Expr) -> ActivatedSum:
        return new_expr(cls, row, column, bias)  # the parts are exact: no sympify, no canonical sorting

    @property
    def pairs(self) -> list[tuple[Expr, Expr]]:
        """The terms (a_j, w_j) that are not zero."""
        return [(a, w) for a, w in zip(self.args[0], self.args[1], strict=True) if a != 0 and w != 0]

    def expanded(self) -> Expr:
        """The sum written out (unevaluated, terms in order, the bias last)."""
        terms = [a if w == 1 else Mul(w, a, evaluate=False) for a, w in self.pairs]
        terms += [self.args[2]] if self.args[2] != 0 else []
        return Add(*terms, evaluate=False) if len(terms) > 1 else terms[0] if terms else Integer(0)

    def doit(self, **hints) -> Expr:
        return Add(*(w * a for a, w in self.pairs), self.args[2])

    def _eval_evalf(self, prec: int) -> Expr:
        return self.doit().evalf(prec_to_dps(prec))  # evalf raises the precision where the terms cancel

    @property
    def is_number(self) -> bool:
        return True

    def _latex(self, printer) -> str:
        return printer._print(self.expanded())

    def _sympystr(self, printer) -> str:
        return printer._print(self.expanded())


def _irrational_output(activation: str, hidden: ImmutableMatrix, up: ImmutableMatrix | None,
                       activated: ImmutableMatrix, W_2: ImmutableMatrix, b_2: ImmutableMatrix | None,
                       known: Numbers) -> ImmutableMatrix:
    """a·W_2 + b_2 as ActivatedSums, their numbers and the activations' filed; an entry whose terms cancel beyond
    the spare bits is summed again from activations evaluated at as many more bits as it lost."""
    W = [[_fraction(w) for w in row] for row in entries(W_2)]  # Python's fractions: SymPy's cost most of the time
    bias = [Integer(0)] * W_2.cols if b_2 is None else list(b_2)
    columns = [Parts(*W_2.col(c)) for c in range(W_2.cols)]
    exact, numbers = [], []
    for i in range(hidden.rows):
        args = [(hidden[i, j], None if up is None else up[i, j]) for j in range(hidden.cols)]
        row_numbers = _activations(activation, args, PRECISION)
        for j, value in enumerate(activated.row(i)):
            if not value.is_Rational:
                known.file(value, row_numbers[j])
        row = Parts(*activated.row(i))
        exact_row, number_row = [], []
        for c in range(W_2.cols):
            terms = [(j, W[j][c]) for j in range(hidden.cols) if W[j][c] != 0 and activated[i, j] != 0]
            entry: Expr = ActivatedSum(row, columns[c], bias[c])
            number = _sum(activation, args, terms, _fraction(bias[c]), row_numbers, again=False)
            if number is None:  # its terms cancel: collected exactly, it may be rational (0 when they cancel out)
                collected = entry.doit()
                if collected.is_Rational:
                    entry = collected
                else:
                    number = _sum(activation, args, terms, _fraction(bias[c]), row_numbers, again=True)
            exact_row.append(entry)
            number_row.append(number)
        exact.append(exact_row)
        numbers.append(number_row)
    output = ImmutableMatrix(exact)
    for value, number in zip(output, (n for row in numbers for n in row), strict=True):
        if number is not None:
            known.file(value, number)
    return output


def _fraction(value: Expr) -> Fraction:
    return Fraction(int(value.p), int(value.q))


def _sum(activation: str, args: list[tuple[Expr, Expr | None]], terms: list[tuple[int, Fraction]], bias: Fraction,
         numbers: list[mpmath.mpf], again: bool) -> mpmath.mpf | None:
    """Σ a_j w_j + b at the working precision, from the row's numbers; when it cancels, None, or (`again`) summed
    again from activations at more bits."""
    prec = PRECISION
    while True:
        with mpmath.workprec(prec):
            parts = [numbers[j] * w.numerator / w.denominator for j, w in terms]
            parts.append(mpmath.mpf(bias.numerator) / bias.denominator)
            total = mpmath.fsum(parts)
            largest = max((abs(p) for p in parts if p), default=mpmath.mpf(0))
            lost = 0 if not largest else int(mpmath.log(largest, 2) - mpmath.log(abs(total), 2)) if total else prec
        if lost <= _SPARE_BITS + prec - PRECISION or prec > 64 * PRECISION:
            return total
        if not again:
            return None
        prec += lost + 64
        numbers = _activations(activation, args, prec)


def _activations(activation: str, args: list[tuple[Expr, Expr | None]], prec: int) -> list[mpmath.mpf]:
    """The numbers φ(h_j) of a row at `prec` bits (h and up exact)."""
    with mpmath.workprec(prec):
        return [activation_number(activation, _mpf(h), None if u is None else _mpf(u)) for h, u in args]


def _mpf(value: Expr) -> mpmath.mpf:
    """An exact value at mpmath's current precision (a rational by one division)."""
    if value.is_Rational:
        return mpmath.mpf(int(value.p)) / int(value.q)
    return mpmath.mpf(str(value.evalf(int(mpmath.mp.dps) + 10)))


def _sign(value: Expr) -> int:
    """The sign of an exact value (a rational, or a carried surd: decided by SymPy, else by its number)."""
    if value.is_Rational:
        return (value.p > 0) - (value.p < 0)
    if value.is_positive:
        return 1
    if value.is_negative:
        return -1
    if value.is_zero:
        return 0
    number = _mpf(value)
    return (number > 0) - (number < 0)
