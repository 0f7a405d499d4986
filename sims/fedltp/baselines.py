"""Fed-LTP's baselines (Sec. 6.1): DP-Fed and Fed-SPA, on the loop of :func:`run_fedltp`.

Sec. 6.1 of ``papers/fed-ltp-lottery-ticket-zcdp.txt`` (line 350): "1) DP-Fed: this
baseline adds instance-level DP to Fed-Avg; 2) Fed-SPA [18]: this baseline integrates
random sparsification with gradient perturbation, and uses acceleration technique to
improve the convergence speed". Both run here through ``run_fedltp(variant=...)``, so the
client sampling, the tau Poisson-sampled DP-SGD steps per client and round
(:class:`sims.fedltp.dp_local.DPLocalTrainer`), the Laplace-noised validation and the
model it keeps (eq. 17-19), the accounting (:func:`sims.fedltp.privacy.epsilon_after`) and
the stop rule are the same code for all three methods; only the weights trained and
uploaded differ.

- **DP-Fed** (DP-FedAvg): no ticket and no pruning; the dense ``w0`` that Fed-LTP's ticket
  0 starts from (same seed), every selected client trains and uploads every coordinate.
- **Fed-SPA** (reading of [18], Hu, Gong and Guo, IJCAI 2021, from the paper's summary;
  [18] itself is not in ``papers/``): *dense-to-sparse* (Sec. 6.2 1): "Fed-SPA only
  reduces the uploading communication cost without reducing the model size") — each
  selected client runs the same dense DP-SGD (gradient perturbation), then uploads a fresh
  uniformly random subset of its update: exactly ``n - round((1 - p) n)`` of the ``n``
  prunable weights plus every bias (:func:`sims.fedltp.masks.random_upload_mask`, seeded
  by client and round); the server averages each coordinate over the clients that
  uploaded it, as Fed-LTP does. The "acceleration technique" (server-side adaptive
  optimisation) is not implemented.

Privacy accounting of Fed-SPA: the upload is a function of the noisy DP-SGD iterates and
of a seed independent of the data, so it is post-processing and its epsilon is DP-Fed's
(and Fed-LTP's) for the same schedule. [18] claims an amplification by the random
sparsification (Table III prints epsilon 9.71 at p = 1 down to 5.16 at p = 0.2); that
amplification is not credited here, so the Fed-SPA epsilons reported are upper bounds
that do not fall with p.

Communication (all three the same way, Sec. 6.1: "p x d x 32 x T x q bits"): 4 bytes
(float32) per transmitted value, download plus upload, summed over the selected clients
and rounds, biases included; no index cost — Fed-LTP's masks are the server's own (the
ticket, or the nested masks it assigns), Fed-SPA's subset is drawn from a seed the server
can share, and DP-Fed is dense. Table III's "Comm (MB)" is per client (the factor q) and
in mebibytes (claim ``fedltp.table3.comm_units``): :func:`per_client_mib` converts.
"""

from __future__ import annotations

from pruneleak.bounds.validation import check_int, check_real
from pruneleak.sims.fedltp.training import VARIANTS, FedLTPResult, run_fedltp

MIB = 2**20
MB = 10**6

__all__ = ["MB", "MIB", "VARIANTS", "per_client_mib", "run_dp_fed", "run_fed_spa", "run_variant"]


def run_dp_fed(config, data, model_factory, **kwargs) -> FedLTPResult:
    """DP-Fed (DP-FedAvg, module docstring); ``kwargs`` as :func:`run_fedltp`."""
    return run_fedltp(config, data, model_factory, variant="dp-fed", **kwargs)


def run_fed_spa(config, data, model_factory, *, keep: float, **kwargs) -> FedLTPResult:
    """Fed-SPA with upload keep rate ``keep`` in (0, 1] (module docstring)."""
    return run_fedltp(config, data, model_factory, variant="fed-spa", upload_keep=keep, **kwargs)


def run_variant(
    variant: str, config, data, model_factory, *, keep: float | None = None, **kwargs
) -> FedLTPResult:
    """``"fedltp"``, ``"dp-fed"`` or ``"fed-spa"`` (``keep`` only for the last)."""
    return run_fedltp(config, data, model_factory, variant=variant, upload_keep=keep, **kwargs)


def per_client_mib(total_bytes: float, num_clients: int) -> float:
    """Table III's unit: cumulative bytes of all clients over ``num_clients``, in MiB.

    >>> per_client_mib(2 * MIB, 4)
    0.5
    """
    func = "per_client_mib"
    total_bytes = check_real("total_bytes", total_bytes, func=func, low=0)
    return total_bytes / check_int("num_clients", num_clients, func=func, low=1) / MIB
