r"""PriPrune statements outside the proof: monotonicity, the NMI footnote, the defense (eq. 7, 17).

Sources: ``papers/priprune-aaai-arxiv2310.19958.txt`` ("AAAI", arXiv 2310.19958v2) and
``papers/priprune-journal-version.txt`` ("journal"). The proof steps of Theorem 1 are in
:mod:`bounds.claims.priprune`; this module checks what the papers *read off* the bound and
the statements about the metric and the defense:

* monotonicity of the bound after eq. (4) (AAAI) / Section 4.2.4 (journal): in the pruning
  rate ``p``, the batch size ``B``, the dimension ``d*`` and, by Corollary 1 (eq. 5), the
  rounds ``T``; each on the published bound and on the corrected one
  (``bounds.priprune``, mask term :math:`d\,H_b(p)`), as sympy derivatives;
* the NMI footnote (AAAI footnote 1, journal Section 4.2.1): plug-in NMI of two
  independent images (the chance level) by Monte Carlo;
* the Gumbel-Softmax mask of eq. (7) (AAAI) / eq. (18) (journal): the hard mask is zero with
  probability :math:`\alpha`;
* the privacy loss eq. (8) (AAAI) / eq. (17) (journal) with the sharing penalty of eq. (6) /
  (16): larger gradients get a larger :math:`\alpha`, and the layer weighting
  :math:`N_l/\sum N_l` gives every layer the same mean :math:`\alpha`;
* the Mix defense rate (AAAI appendix "Defense Details", journal Appendix D.1) as the sum
  of its largest-gradient and random parts;
* the parameter count of Conv-2 ("Impact of Model Size") from LEAF's layer sizes.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy import optimize

from pruneleak.bounds import priprune
from pruneleak.bounds.claims.checks import GridCheck, MonteCarloCheck, Param, SymbolicCheck
from pruneleak.bounds.claims.claim import Claim

# ---------------------------------------------------------------------------------------
# Monotonicity of Theorem 1 / Corollary 1 (AAAI after eq. 4 and eq. 5)
# ---------------------------------------------------------------------------------------

_S = priprune.SYMBOLS
# Plain names for the grid (the package's d* symbol is printed "d^*", not an identifier).
_D_STAR = sp.Symbol("d_star", positive=True, integer=True)


def _bound(*, corrected, multi=False):
    """Theorem 1 (or Corollary 1 with ``multi``) in bits, with ``d_star`` as the dimension."""
    expr = (
        priprune.multi_round_bound_expr(corrected=corrected)
        if multi
        else priprune.single_round_bound_expr(corrected=corrected)
    )
    return expr.subs(_S.d_star, _D_STAR)


def _slope_check(var, relation, params, *, corrected, domain_param=None, multi=False):
    """The sign of d(bound)/d(var): ``"<="`` 0 for "decreases", ``">="`` 0 for "increases"."""
    which = "corrected" if corrected else "published"
    return SymbolicCheck(
        true=sp.diff(_bound(corrected=corrected, multi=multi), var),
        claimed=sp.Integer(0),
        relation=relation,
        params=params,
        true_label=f"d/d{var} of the {which} bound (bits)",
        claimed_label="0",
        domain_param=domain_param,
    )


_P = Param("p", 0.01, 0.99, points=99)
_B = Param("B", 1.0, 1024.0, scale="log", points=61)
_DSTAR = Param("d_star", 1, 10_000, scale="log", integer=True, points=9, label="d*")
_D = Param("d", 1, 10**6, scale="log", integer=True, points=7)

MONOTONE_P = Claim(
    id="priprune.monotone_p",
    paper="priprune",
    location="AAAI, sentence after eq. (4) (journal Section 4.2.4, 'Impact of Pruning Rate')",
    statement="The upper bound on the leakage decreases with a larger pruning rate p.",
    checks=(
        _slope_check(_S.p, "<=", (_P, _B, _DSTAR), corrected=False),
        _slope_check(_S.p, "<=", (_P, _D), corrected=True, domain_param="p"),
    ),
    notes=(
        "The published mask term 1 - (p-1)/(2 ln 2) has slope -1/(2 ln 2); the corrected "
        "mask entropy d H_b(p) has slope d log2((1-p)/p), positive for p < 1/2."
    ),
    corrected=(
        "With the mask entropy d H_b(p) the bound increases in p on [0, 1/2] and decreases "
        "on [1/2, 1] (slope d log2((1-p)/p)), for every d, B, d*, Delta: it is maximal at "
        "p = 1/2, and 'larger pruning rate, less leakage' holds only for p >= 1/2."
    ),
)

MONOTONE_B = Claim(
    id="priprune.monotone_B",
    paper="priprune",
    location="AAAI, sentence after eq. (4) (journal Section 4.2.4, 'Impact of Batch Size')",
    statement="The upper bound on the leakage decreases with a larger batch size B.",
    checks=(
        _slope_check(_S.B, "<=", (_B, _DSTAR), corrected=False),
        _slope_check(_S.B, "<=", (_B, _DSTAR), corrected=True),
    ),
    notes="Slopes -2/(B ln 2) (published) and -d*/(B ln 2) (corrected), bits per unit B.",
)

MONOTONE_DSTAR = Claim(
    id="priprune.monotone_dstar",
    paper="priprune",
    location="AAAI, sentence after eq. (4) (journal Section 4.2.4, 'Impact of Model Size')",
    statement="The upper bound on the leakage increases with the dimension d*.",
    checks=(
        _slope_check(_D_STAR, ">=", (_DSTAR, _B), corrected=False),
        _slope_check(_D_STAR, ">=", (_DSTAR, _B), corrected=True, domain_param="B"),
    ),
    notes=(
        "At fixed Delta, as the statement reads the bound. The corrected bound is the entropy "
        "of N(0, Sigma/B) plus the mask term: each of the d* coordinates adds log2(2 pi e/B) "
        "bits, negative for B > 2 pi e (FEMNIST uses B = 20). With an isotropic Sigma = "
        "lambda I, Delta = -(d*/2) ln lambda moves with d* and the condition becomes "
        "B < 2 pi e lambda."
    ),
    corrected=(
        "At fixed Delta the corrected bound changes by log2(2 pi e / B) bits per unit of d*: "
        "it increases with d* iff B <= 2 pi e ~ 17.08 and decreases for larger batches "
        "(for Sigma = lambda I: iff B <= 2 pi e lambda)."
    ),
)

_P_ONE = Param("p", 0.0, 1.0, points=11)
_FIXED_B = Param("B", 1.0, 1.0, points=1)
_FIXED_DSTAR = Param("d_star", 1, 1, integer=True, points=1, label="d*")
_DELTA_T = Param("Delta", -20.0, 20.0, points=81, label="Delta (nats)")

MONOTONE_T = Claim(
    id="priprune.monotone_T",
    paper="priprune",
    location="AAAI, sentence after eq. (5) (Corollary 1; journal after eq. 15)",
    statement=(
        "Increasing the number of global rounds T results in a proportional rise of the "
        "leakage bound T (1 - (p-1)/(2 ln 2) + 2 log(1/B) + 2 Delta + d* log(2 pi e))."
    ),
    checks=(
        _slope_check(
            _S.T,
            ">=",
            (_DELTA_T, _P_ONE, _FIXED_B, _FIXED_DSTAR),
            corrected=False,
            domain_param="Delta",
            multi=True,
        ),
    ),
    notes=(
        "d/dT of the bound is the single-round bound, which is negative when 2 Delta is "
        "below -(the other terms): e.g. Sigma = lambda I with lambda > 2 pi e gives "
        "2 Delta = -d* log2(lambda) < -d* log2(2 pi e). Grid at B = 1, d* = 1, p in [0, 1]."
    ),
    corrected=(
        "The bound rises with T iff the single-round bound is >= 0, i.e. iff "
        "Delta >= (ln 2 / 2) (2 log2 B - 1 - (1-p)/(2 ln 2) - d* log2(2 pi e)) nats "
        "(at B = d* = 1, p = 1: Delta >= -ln(4 pi e)/2 = -1.766); below it the published "
        "bound is negative, impossible for a mutual information."
    ),
)

# ---------------------------------------------------------------------------------------
# The NMI footnote (AAAI footnote 1, journal Section 4.2.1)
# ---------------------------------------------------------------------------------------

# The papers report NMI to two decimals and compare methods that differ by 0.01 to 0.1
# (journal Table 2 and Table A1), so a chance level of 0.01 or more is not "0" there.
_CHANCE_TOLERANCE = 0.01
_NMI_SAMPLES = 200


def _entropy_of_counts(counts, n):
    """Plug-in entropy in nats of a histogram with total ``n``."""
    p = counts[counts > 0] / n
    return float(-(p * np.log(p)).sum())


def _plugin_nmi(u, v, levels):
    """The footnote's NMI: I(U; V) / mean(H(U), H(V)) from plug-in frequencies (nats)."""
    n = u.size
    joint = np.bincount(u * levels + v, minlength=levels * levels)
    h_u = _entropy_of_counts(np.bincount(u, minlength=levels), n)
    h_v = _entropy_of_counts(np.bincount(v, minlength=levels), n)
    h_uv = _entropy_of_counts(joint, n)
    mean = (h_u + h_v) / 2
    return (h_u + h_v - h_uv) / mean if mean > 0 else 0.0


def _chance_nmi_sampler(rng, n, levels, pixels):
    """NMI of n pairs of independent images with ``pixels`` values uniform on ``levels``."""
    images = rng.integers(0, levels, size=(n, 2, pixels))
    return np.array([_plugin_nmi(a, b, levels) for a, b in images])


NMI_CHANCE = Claim(
    id="priprune.nmi_chance",
    paper="priprune",
    location=(
        "AAAI footnote 1 (Performance Metrics) and journal Section 4.2.1 (NMI = "
        "I(U;V)/mean(H(U),H(V)) with I from the counts |U_i cap V_j|)"
    ),
    statement=(
        "The footnote's NMI between the training image and the reconstruction measures "
        "leakage: an unrelated (independent) reconstruction scores NMI ~ 0."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_chance_nmi_sampler,
            claimed=lambda levels, pixels: _CHANCE_TOLERANCE,
            points=(
                {"levels": 256, "pixels": 64},  # 8 x 8 (scikit-learn digits)
                {"levels": 17, "pixels": 64},  # digits at their own 17 levels
                {"levels": 256, "pixels": 784},  # 28 x 28 FEMNIST
                {"levels": 256, "pixels": 3072},  # 32 x 32 x 3 CIFAR-10
                {"levels": 2, "pixels": 3072},  # n >> L^2: near 0, as claimed
            ),
            relation="<=",
            statistic="mean",
            samples=_NMI_SAMPLES,
            true_label="E[plug-in NMI] of two independent uniform images",
            claimed_label=f"{_CHANCE_TOLERANCE} (0 at two decimals)",
            labels={"levels": "L", "pixels": "n"},
        ),
    ),
    notes=(
        "With n pixels and L levels the plug-in MI of independent images is biased up by "
        "about (L-1)^2/(2n) nats (Miller-Madow) when n >> L^2, and for n < L^2 nearly every "
        "joint cell is a singleton, so I ~ H(U) + H(V) - ln n and NMI approaches 1."
    ),
    corrected=(
        "The chance level of the plug-in NMI is E[NMI] ~ (L-1)^2 / (2 n ln L) for n >> L^2 "
        "and large for n < L^2 (0.96, 0.76 and 0.55 for uniform 256-level images of 8x8, "
        "28x28 and 32x32x3 values; 0.6 for a digits image against 256-level noise): "
        "report NMI minus its chance level, or adjusted MI (expected 0 at chance)."
    ),
)

# ---------------------------------------------------------------------------------------
# The defense mask: Gumbel-Softmax (AAAI eq. 7, journal eq. 18)
# ---------------------------------------------------------------------------------------


def _gumbel_hard_zero(rng, n, alpha, tau):
    """n hard samples of eq. (7) with pi = [alpha, 1 - alpha]: True where the mask is 0."""
    gumbel = -np.log(-np.log(rng.uniform(size=(n, 2))))
    logits = (np.log([alpha, 1 - alpha]) + gumbel) / tau
    soft = np.exp(logits - logits.max(axis=1, keepdims=True))
    soft /= soft.sum(axis=1, keepdims=True)
    return soft[:, 0] > soft[:, 1]


GUMBEL_HARD_MASK = Claim(
    id="priprune.gumbel_mask_probability",
    paper="priprune",
    location="AAAI eq. (7) and the sentence after it (journal eq. 18, 'hard sample trick')",
    statement=(
        "With pi = [alpha, 1 - alpha] and G = -log(-log U), the (hard) defense mask sampled "
        "by eq. (7) is 0 with probability alpha, the probability of not sharing."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_gumbel_hard_zero,
            claimed=lambda alpha, tau: alpha,
            points=tuple({"alpha": a, "tau": t} for a in (0.1, 0.3, 0.7) for t in (0.1, 1.0, 10.0)),
            relation="==",
            statistic="probability",
            samples=20_000,
            true_label="P(argmax_k v(k) = 0) (Monte Carlo)",
            claimed_label="alpha",
            labels={"alpha": "alpha", "tau": "tau"},
        ),
    ),
    notes="The argmax does not depend on tau: v(0) > v(1) iff log pi(0) + G(0) > log pi(1) + G(1).",
)

# ---------------------------------------------------------------------------------------
# The privacy loss (AAAI eq. 8 / journal eq. 17) with the sharing penalty (eq. 6 / 16)
# ---------------------------------------------------------------------------------------

# Two layers with fixed gradient magnitudes: a short linear profile and a long,
# heavy-tailed one (their mean/max ratios differ, which is what decides the domain).
_LAYER_GRADIENTS = (
    np.linspace(1.0, 20.0, 20),
    np.exp(np.linspace(-3.0, 1.0, 50)),
)


def _alpha_minimiser(weight, ratio):
    r"""argmin over alpha in (0, 1] of -ratio * weight * log(alpha) + alpha, numerically.

    One coordinate of :math:`\lambda_{pri}\mathcal L_{pri} + \lambda_{sha}\sum\alpha` divided
    by :math:`\lambda_{sha}`, ``ratio`` = :math:`\lambda_{pri}/\lambda_{sha}`.
    """

    def objective(alpha):
        return -ratio * weight * math.log(alpha) + alpha

    res = optimize.minimize_scalar(
        objective, bounds=(1e-12, 1.0), method="bounded", options={"xatol": 1e-12}
    )
    return res.x if objective(res.x) <= objective(1.0) else 1.0


@np.vectorize
def _alpha_of_weight(weight, ratio):
    return _alpha_minimiser(weight, ratio)


ALPHA_ORDER = Claim(
    id="priprune.eq17_alpha_order",
    paper="priprune",
    location="Journal eq. (17) and the paragraph after it (AAAI eq. 8 and the text before it)",
    statement=(
        "Minimising lambda_pri L_pri + lambda_sha sum alpha gives a higher alpha (probability "
        "of not sharing) to parameters with a larger weight term N_l |g_j| / (sum N sum |g|)."
    ),
    checks=(
        GridCheck(
            true=lambda w, ratio: _alpha_of_weight(1.5 * w, ratio),
            claimed=lambda w, ratio: _alpha_of_weight(w, ratio),
            params=(
                Param("w", 1e-8, 1e-1, scale="log", points=29, label="weight term"),
                Param("ratio", 1.0, 1e6, scale="log", points=13, label="lambda_pri/lambda_sha"),
            ),
            relation=">=",
            true_label="alpha* at 1.5 x the weight term (scipy bounded minimiser)",
            claimed_label="alpha* at the weight term",
            rtol=1e-6,
            refine=False,
        ),
    ),
    notes="alpha* is non-decreasing in the weight (strictly until it reaches 1).",
)


def _layer_mean_alpha(layer, rate):
    r"""Mean optimal alpha in one layer when the unclipped mean would be ``rate``.

    With weights :math:`w_j = \frac{N_l}{N}\frac{|g_j|}{\sum_{j\in l}|g_j|}` the
    minimiser is :math:`\alpha_j = \min(1, \frac{\lambda_{pri}}{\lambda_{sha}} w_j)`;
    ``rate`` is :math:`\lambda_{pri}/(\lambda_{sha}N)`, the layer mean when nothing clips.
    """
    g = _LAYER_GRADIENTS[layer]
    return np.mean(np.minimum(1.0, rate * g.size * g / g.sum()))


def _layer_means(rate, *, layer):
    return np.vectorize(lambda r: _layer_mean_alpha(layer, r))(rate)


LAYER_UNIFORM = Claim(
    id="priprune.eq17_uniform_layer_sparsity",
    paper="priprune",
    location="Journal paragraph after eq. (17) (AAAI paragraph before eq. 8)",
    statement=(
        "Weighting layer l by N_l / sum_l N_l in the privacy loss ensures uniform layer-wise "
        "sparsity: the optimal alpha has the same mean in every layer."
    ),
    checks=(
        GridCheck(
            true=lambda rate: _layer_means(rate, layer=0),
            claimed=lambda rate: _layer_means(rate, layer=1),
            params=(
                Param("rate", 1e-3, 1.0, scale="log", points=61, label="lambda_pri/(lambda_sha N)"),
            ),
            relation="==",
            true_label="mean alpha* in a 20-weight layer (linear |g|)",
            claimed_label="mean alpha* in a 50-weight layer (log-spaced |g|)",
            domain_param="rate",
        ),
    ),
    notes=(
        "alpha*_j = min(1, lambda_pri w_j / lambda_sha); unclipped, every layer's mean is "
        "lambda_pri / (lambda_sha N). Clipping at 1 starts at different rates in each layer."
    ),
    corrected=(
        "Every layer has the same mean alpha* = lambda_pri / (lambda_sha N) iff no alpha* "
        "clips at 1, i.e. iff lambda_pri / (lambda_sha N) <= min_l mean_l|g| / max_l|g| "
        "(the smallest mean-to-max ratio of gradient magnitudes in a layer); beyond it, "
        "layers with heavy-tailed gradients are sparsified less."
    ),
)

# ---------------------------------------------------------------------------------------
# The Mix defense rate (AAAI appendix "Defense Details", journal Appendix D.1)
# ---------------------------------------------------------------------------------------

_MIX_WEIGHTS = 2_000


def _mix_pruned_fraction(rng, n, largest, random):
    """Pruned fraction of n Mix masks: the top ``largest`` gradients and a random ``random``.

    Gradient magnitudes are |N(0, 1)| per weight; the random part is the Random defense
    mask, each weight pruned with probability ``random`` independently of the largest part.
    """
    grads = np.abs(rng.standard_normal((n, _MIX_WEIGHTS)))
    k = round(largest * _MIX_WEIGHTS)
    top = np.zeros((n, _MIX_WEIGHTS), dtype=bool)
    if k:
        top[np.arange(n)[:, None], np.argpartition(-grads, k - 1, axis=1)[:, :k]] = True
    return np.mean(top | (rng.uniform(size=(n, _MIX_WEIGHTS)) < random), axis=1)


MIX_RATE = Claim(
    id="priprune.mix_defense_rate",
    paper="priprune",
    location=(
        "AAAI appendix 'Defense Details', PruneFL + Mix (journal Appendix D.1): "
        "p_largest = 0.15 and p_random = 0.15"
    ),
    statement=(
        "The defense pruning rate of Mix, the largest-gradient mask combined with the random "
        "mask, is the sum p_largest + p_random (0.15 + 0.15 = 0.3, as for Largest and Random)."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_mix_pruned_fraction,
            claimed=lambda largest, random: largest + random,
            points=tuple(
                # 30 % largest with 0 % random is deterministic (exactly 0.3): left out
                {"largest": a, "random": round(0.3 - a, 2)}
                for a in (0.0, 0.1, 0.15, 0.2)
            ),
            relation="==",
            statistic="mean",
            samples=200,
            true_label=f"pruned fraction of the union of the two masks ({_MIX_WEIGHTS} weights)",
            claimed_label="p_largest + p_random",
            labels={"largest": "p_largest", "random": "p_random"},
        ),
    ),
    notes=(
        "The papers' Random defense prunes each weight at rate p_random; combined with the "
        "largest-gradient mask, some randomly chosen weights are already pruned."
    ),
    corrected=(
        "Two independent masks prune 1 - (1 - p_largest)(1 - p_random) = p_largest + "
        "p_random - p_largest p_random (0.2775 for 0.15 + 0.15); the rates add only when the "
        "random weights are drawn among those the largest-gradient mask keeps, at rate "
        "p_random / (1 - p_largest)."
    ),
)

# ---------------------------------------------------------------------------------------
# Model size (AAAI "Impact of Model Size", journal Section 4.2.4)
# ---------------------------------------------------------------------------------------


def _leaf_cnn_parameters(classes):
    """Weights and biases of LEAF's FEMNIST CNN (Caldas et al. 2019), the papers' Conv-2.

    28x28x1 input; conv 5x5 to 32 channels and conv 5x5 to 64 channels ('same' padding),
    each followed by 2x2 max-pooling (to 7x7x64 = 3136); dense 2048; dense ``classes``.
    """
    conv1 = 5 * 5 * 1 * 32 + 32
    conv2 = 5 * 5 * 32 * 64 + 64
    dense = 7 * 7 * 64 * 2048 + 2048
    return conv1 + conv2 + dense + 2048 * classes + classes


CONV2_SIZE = Claim(
    id="priprune.conv2_parameter_count",
    paper="priprune",
    location="AAAI 'Impact of Model Size' (journal Section 4.2.4): Conv-2 has 6,603,710 parameters",
    statement=(
        "The FEMNIST model Conv-2 of Caldas et al. (2019), two convolutional and two linear "
        "layers, has 6,603,710 parameters."
    ),
    checks=(
        GridCheck(
            true=_leaf_cnn_parameters,
            claimed=lambda classes: 6_603_710 + 0 * classes,
            params=(Param("classes", 62, 62, integer=True, points=1, label="FEMNIST classes"),),
            relation="==",
            true_label="parameters of the LEAF FEMNIST CNN",
            claimed_label="6,603,710",
            rtol=0.0,
            atol=0.5,
        ),
    ),
    notes=(
        "Conv-1, Conv-4 and Conv-6 (3,815,566, 13,657,406 and 25,324,350) have no stated "
        "layer sizes, so they are not checked; LEAF's CNN minus one convolution would have "
        "more parameters than Conv-2 (a 14x14x32 = 6272-input dense layer: 12,974,974), not "
        "the 3,815,566 stated for Conv-1."
    ),
)

CLAIMS = (
    MONOTONE_P,
    MONOTONE_B,
    MONOTONE_DSTAR,
    MONOTONE_T,
    NMI_CHANCE,
    GUMBEL_HARD_MASK,
    ALPHA_ORDER,
    LAYER_UNIFORM,
    MIX_RATE,
    CONV2_SIZE,
)
