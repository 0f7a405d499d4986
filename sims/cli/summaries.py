"""One line per ``pruneleak`` subcommand: its entry in ``pruneleak --help``.

Kept apart from the subcommands' modules, which import torch and the simulations when
their parsers are built, so that :func:`sims.cli.build_parser` lists every command
without importing any module but the one chosen (``pruneleak bound`` and ``pruneleak
--help`` start without torch). Each subcommand passes its line as ``help=`` to
:func:`sims.cli.add_command`; a subcommand missing here is registered in full instead.
"""

SUMMARIES = {
    "demo": "exact leakage and bounds in bits, and SGI/GI's NMI, versus p on digits",
    "bound": "evaluate a paper's bound, published and corrected",
    "train": "train a pruned FL model and record its per-round test accuracy",
    "sweep": "run or resume an attack-study sweep from a TOML grid",
    "fedltp": "Fed-LTP or a baseline (DP-Fed, Fed-SPA) trained to a privacy budget",
    "verify": "check every checkable statement and proof step of the source papers",
    "figures": "execute the notebooks of a checkout and write their figures under --out",
    "leakage": "exact I(X; Y) of a pruned update beside its bounds and attacks, in bits",
    "results": "check or repair a results file (JSON lines, one record per job)",
    "audit": "audit your own model, data and pruning mask: exact bits, bounds, attacks",
}
