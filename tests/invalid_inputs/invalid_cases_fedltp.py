"""Invalid inputs of Fed-LTP's options and training: rows of test_invalid_inputs (issue 30).

Values that overflow float32 training (``--clip 1e308``, ``--sigma 1e308``, ``--lr 1e308``),
training that diverges to non-finite weights, work beyond the stated limits (rounds,
local steps) and sampling rates outside (0, 1]. A command-line row must name the option
(``--sigma``), an API row the public parameter (``noise_multiplier``, ``sampling_rate``),
never an internal one (``'q' of fedltp_epsilon_corrected``). Runs are DP-Fed (no tickets
to train) on the tiny setting of invalid_cases_checkpoints.
"""

from __future__ import annotations

from dataclasses import replace

from invalid_case import ApiCase, CliCase
from invalid_cases_checkpoints import CONFIG, FEDLTP, _data, logreg

from pruneleak.sims.fedltp import FedLTPConfig, affordable_rounds, epsilon_after, run_fedltp
from pruneleak.sims.fedltp.tickets import find_ticket


def _run(variant: str = "dp-fed", upload_keep=None, **changes):
    """A call running the tiny configuration with ``changes``, without a store."""

    def call(tmp):
        config = replace(CONFIG, **changes)
        return run_fedltp(
            config, _data(), logreg, device="cpu", variant=variant, upload_keep=upload_keep
        )

    return call


COMMAND_LINE = [
    CliCase("fedltp-cli-clip-overflows", [*FEDLTP, "--clip", "1e308"], ["--clip", "1e+308"]),
    CliCase("fedltp-cli-sigma-overflows", [*FEDLTP, "--sigma", "1e308"], ["--sigma", "1e+308"]),
    CliCase("fedltp-cli-lr-overflows", [*FEDLTP, "--lr", "1e308"], ["--lr", "1e+308"]),
    CliCase(
        "fedltp-cli-noise-diverges",  # sigma C = 1e38 fits float32, the weights do not
        [*FEDLTP, "--sigma", "1e37", "--clip", "10"],
        ["diverged in round 1", "--sigma (1e+37)", "--clip (10.0)", "--lr"],
    ),
    CliCase(
        "fedltp-cli-lr-diverges",
        [*FEDLTP, "--lr", "1e38"],
        ["diverged in round 1", "--lr (1e+38"],
    ),
    CliCase(
        "fedltp-cli-fed-spa-noise-diverges",
        [*FEDLTP[:2], "fed-spa", *FEDLTP[3:], "--sigma", "1e37"],
        ["diverged in round 1", "--sigma (1e+37)"],
    ),
    CliCase(
        "fedltp-cli-rounds-beyond-limit",  # one accounting call per round took hours
        [*FEDLTP, "--rounds", "100000", "--epsilon", "1e300"],
        ["--rounds", "[1, 10000]", "100000"],
    ),
    *(
        CliCase(
            f"fedltp-cli-{option}-beyond-limit",
            [*FEDLTP, f"--{option}", "1e9"],
            [f"--{option}", "[1, 100000]", "1000000000"],
        )
        for option in ("clients", "tickets", "ticket-steps")
    ),
    CliCase(
        "fedltp-cli-local-steps-beyond-limit",
        [*FEDLTP, "--local-steps", "1000000"],
        ["--local-steps", "[1, 100000]", "1000000"],
    ),
    CliCase("fedltp-cli-momentum-one", [*FEDLTP, "--momentum", "1"], ["--momentum", "[0, 1)"]),
    CliCase("fedltp-cli-delta-one", [*FEDLTP, "--delta", "1"], ["--delta", "(0, 1)", "1.0"]),
    CliCase(
        "fedltp-cli-client-rate-above-one",
        [*FEDLTP, "--client-rate", "1.5"],
        ["--client-rate", "(0, 1]", "1.5"],
    ),
    CliCase("fedltp-cli-lr-decay-above-one", [*FEDLTP, "--lr-decay", "2"], ["--lr-decay", "2.0"]),
    CliCase(
        "fedltp-cli-prune-degree-one", [*FEDLTP, "--prune-degree", "1"], ["--prune-degree", "1.0"]
    ),
    CliCase(
        "fedltp-cli-further-prune-one",
        [*FEDLTP, "--further-prune", "1"],
        ["--further-prune", "1.0"],
    ),
]

API = [
    ApiCase(
        "fedltp-config-lr-overflows",
        lambda tmp: FedLTPConfig(lr=1e308),
        ["'lr'", "FedLTPConfig", "3.40282e+38", "1e+308"],
    ),
    ApiCase(
        "fedltp-config-ticket-lr-overflows",
        lambda tmp: FedLTPConfig(ticket_lr=1e308),
        ["'ticket_lr'", "1e+308"],
    ),
    ApiCase(
        "fedltp-config-noise-std-overflows",
        lambda tmp: FedLTPConfig(noise_multiplier=1e308),
        ["'noise_multiplier'", "'max_grad_norm'", "1e+308 * 10.0"],
    ),
    ApiCase(
        "fedltp-config-clip-overflows-the-noise",
        lambda tmp: FedLTPConfig(max_grad_norm=1e308),
        ["'noise_multiplier'", "'max_grad_norm'", "1.4 * 1e+308"],
    ),
    ApiCase(
        "fedltp-config-rounds-beyond-limit",
        lambda tmp: FedLTPConfig(rounds=100_000),
        ["'rounds'", "[1, 10000]", "100000"],
    ),
    ApiCase(
        "fedltp-config-ticket-lr-beyond-adam",  # Adam's first step lr / 0.1 overflowed
        lambda tmp: FedLTPConfig(ticket_lr=3e38),
        ["'ticket_lr'", "3.40282e+37", "3e+38"],
    ),
    ApiCase(
        "fedltp-ticket-training-diverges",
        lambda tmp: find_ticket(
            logreg,
            _data().public,
            _data().public_val,
            prune_degree=0.5,
            steps=20,
            lr=1e37,
            batch_size=8,
            seed=0,
        ),
        ["'lr'", "find_ticket", "ticket_lr", "diverge", "1e+37"],
    ),
    ApiCase(
        "fedltp-config-ticket-batch-beyond-limit",
        lambda tmp: FedLTPConfig(ticket_batch_size=10**9),
        ["'ticket_batch_size'", "[1, 100000]"],
    ),
    ApiCase(
        "fedltp-config-local-steps-beyond-limit",
        lambda tmp: FedLTPConfig(local_steps=10**6),
        ["'local_steps'", "[1, 100000]"],
    ),
    ApiCase(
        "fedltp-epsilon-after-sampling-rate-above-one",
        lambda tmp: epsilon_after(FedLTPConfig(), 1, sampling_rate=2.0),
        ["'sampling_rate'", "epsilon_after", "(0, 1]", "2.0"],
    ),
    ApiCase(
        "fedltp-epsilon-after-sampling-rate-nan",
        lambda tmp: epsilon_after(FedLTPConfig(), 1, sampling_rate=float("nan")),
        ["'sampling_rate'", "epsilon_after", "nan"],
    ),
    ApiCase(
        "fedltp-affordable-rounds-sampling-rate-zero",  # no step sampled: no training at all
        lambda tmp: affordable_rounds(FedLTPConfig(), sampling_rate=0.0),
        ["'sampling_rate'", "affordable_rounds", "(0, 1]", "0.0"],
    ),
    ApiCase(
        "fedltp-run-noise-diverges",
        _run(noise_multiplier=1e37, max_grad_norm=10.0),
        ["diverged in round 1", "'noise_multiplier' (1e+37)", "'max_grad_norm' (10.0)"],
    ),
    ApiCase(
        "fedltp-run-lr-diverges",
        _run(lr=1e38),
        ["diverged in round 1", "'lr' (1e+38"],
    ),
    ApiCase(
        "fedltp-run-batch-clipping-diverges",
        _run(clipping="batch", noise_multiplier=1e37, max_grad_norm=10.0),
        ["diverged in round 1", "'noise_multiplier' (1e+37)"],
    ),
    ApiCase(
        "fedltp-run-fed-spa-diverges",  # the upload mask could hide a client's overflow
        _run("fed-spa", 0.2, noise_multiplier=1e37, max_grad_norm=10.0),
        ["diverged in round 1", "'noise_multiplier' (1e+37)"],
    ),
]

CASES: list[ApiCase | CliCase] = [*COMMAND_LINE, *API]
