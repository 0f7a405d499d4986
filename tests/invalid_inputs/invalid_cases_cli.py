"""Invalid inputs of cli: rows of test_invalid_inputs.

Command lines refused before any long work starts: numbers a count or a scale cannot be
(refused by the option's type at parse time, the line naming the option, the range and
the value), values the library's configurations refuse (naming their parameter), unknown
choices, and files or folders of the wrong kind. Commands that write are pointed into
the test's folder (``--out {tmp}/out``), so that a refusal that came too late would not
write into the checkout.
"""

from invalid_case import ApiCase, CliCase

OUT = ["--out", "{tmp}/out"]
PRIPRUNE = ["bound", "priprune", "--p", "0.3", "--B", "20", "--d-star", "100"]
FEDLTP = ["bound", "fedltp", "--q", "0.1", "--sigma", "1", "--lambda-val", "1", "--t", "3"]
EQUIVALENCE = ["bound", "equivalence", "--sigma", "100", "--sigma-a", "0.01", "--d", "10"]


def _with(argv: list[str], option: str, value: str) -> list[str]:
    """``argv`` with the value after ``option`` replaced by ``value``."""
    at = argv.index(option) + 1
    return [*argv[:at], value, *argv[at + 1 :]]


def _file(name: str, text: str = "not what is expected\n"):
    """A setup writing ``text`` to ``name`` in the test's folder."""
    return lambda tmp: (tmp / name).write_text(text)


def _folder(name: str):
    """A setup making the folder ``name`` in the test's folder."""
    return lambda tmp: (tmp / name).mkdir()


CASES: list[ApiCase | CliCase] = [
    # the command line itself
    CliCase("cli-no-command", [], ["choose a COMMAND"]),
    CliCase("cli-unknown-command", ["prune"], ["invalid choice: 'prune'", "demo"]),
    CliCase("cli-threads-negative", ["--threads", "-1", "verify"], ["--threads", "[0, inf)", "-1"]),
    CliCase("cli-threads-not-integer", ["--threads", "1.5", "verify"], ["--threads", "'1.5'"]),
    # demo
    CliCase(
        "cli-demo-images-zero", ["demo", "--images", "0", *OUT], ["--images", "[1, inf)", "Got 0"]
    ),
    CliCase("cli-demo-rates-nan", ["demo", "--rates", "0.5", "nan", *OUT], ["--rates", "Got nan"]),
    CliCase(
        "cli-demo-rates-above-one",
        ["demo", "--rates", "1.5", *OUT],
        ["pruning_rates", "[0, 1]", "1.5"],
    ),
    CliCase(
        "cli-demo-noise-negative", ["demo", "--noise", "-1", *OUT], ["--noise", "[0, inf)", "-1"]
    ),
    CliCase(
        "cli-demo-pruning-unknown",
        ["demo", "--pruning", "lottery", *OUT],
        ["--pruning", "'lottery'", "'random'"],
    ),
    CliCase(
        "cli-demo-one-candidate",
        ["demo", "--candidates", "1", *OUT],
        ["candidates", "[2, 1797]", "Got 1"],
    ),
    CliCase(
        "cli-demo-dataset-of-unknown-size",
        ["demo", "--dataset", "femnist", *OUT],
        ["--dataset", "'femnist'", "'faces'"],
    ),
    CliCase(
        "cli-demo-more-faces-than-there-are",
        ["demo", "--dataset", "faces", "--quick", "--candidates", "201", *OUT],
        ["candidates", "[2, 200]", "Got 201"],
    ),
    CliCase(
        "cli-demo-estimate-draws-too-few",
        ["demo", "--estimate-draws", "8", *OUT],
        ["--estimate-draws", "estimate_draws", "[16, 1000000]", "Got 8"],
    ),
    CliCase("cli-demo-seed-negative", ["demo", "--seed", "-3", *OUT], ["--seed", "[0, inf)", "-3"]),
    CliCase(
        "cli-demo-out-is-a-file",
        ["demo", "--out", "{tmp}/taken"],
        ["output folder", "{tmp}/taken"],
        _file("taken"),
    ),
    # bound
    CliCase("cli-bound-no-kind", ["bound"], ["choose a BOUND"]),
    CliCase(
        "cli-bound-priprune-p-above-one",
        [*_with(PRIPRUNE, "--p", "1.3"), "--delta", "0"],
        ["'p' parameter", "[0, 1]", "1.3"],
    ),
    CliCase(
        "cli-bound-priprune-delta-inf",
        [*PRIPRUNE, "--delta", "inf"],
        ["--delta", "finite", "Got inf"],
    ),
    CliCase(
        "cli-bound-priprune-delta-minus-inf",
        [*PRIPRUNE, "--delta", "-inf"],
        ["--delta", "finite", "Got -inf"],
    ),
    CliCase("cli-bound-priprune-overflow", [*PRIPRUNE, "--delta", "1e308"], ["delta", "1e+308"]),
    CliCase(
        "cli-bound-priprune-d-star-zero",
        [*_with(PRIPRUNE, "--d-star", "0"), "--delta", "0"],
        ["--d-star", "[1, inf)", "Got 0"],
    ),
    CliCase("cli-bound-priprune-no-delta", PRIPRUNE, ["--delta", "--log-pdet", "required"]),
    CliCase(
        "cli-bound-priprune-unit",
        [*PRIPRUNE, "--delta", "0", "--unit", "furlongs"],
        ["--unit", "'furlongs'", "'bits'"],
    ),
    CliCase(
        "cli-bound-fedltp-sigma-zero",
        _with(FEDLTP, "--sigma", "0"),
        ["--sigma", "(0, inf)", "Got 0"],
    ),
    CliCase(
        "cli-bound-fedltp-q-above-one",
        _with(FEDLTP, "--q", "1.5"),
        ["'q' parameter", "[0, 1]", "1.5"],
    ),
    CliCase("cli-bound-fedltp-t-negative", _with(FEDLTP, "--t", "-1"), ["--t", "[0, inf)", "-1"]),
    CliCase(
        "cli-bound-fedltp-order-one",
        [*FEDLTP, "--alpha", "1"],
        ["'alpha'", "(1, 1048576]", "Got 1.0"],
    ),
    CliCase(
        "cli-bound-equivalence-width-zero", [*EQUIVALENCE, "--m", "0"], ["--m", "[1, inf)", "Got 0"]
    ),
    CliCase(
        "cli-bound-equivalence-delta-dp",
        [*EQUIVALENCE, "--m", "100", "--delta-dp", "2"],
        ["'delta_dp'", "(0, 1)", "2.0"],
    ),
    # train
    CliCase("cli-train-lr-nan", ["train", "--lr", "nan", *OUT], ["--lr", "(0, inf)", "Got nan"]),
    CliCase("cli-train-lr-negative", ["train", "--lr", "-0.1", *OUT], ["--lr", "(0, inf)", "-0.1"]),
    CliCase(
        "cli-train-rounds-zero", ["train", "--rounds", "0", *OUT], ["--rounds", "[1, inf)", "Got 0"]
    ),
    CliCase(
        "cli-train-width-zero", ["train", "--width", "0", *OUT], ["--width", "[1, inf)", "Got 0"]
    ),
    CliCase(
        "cli-train-test-fraction",
        ["train", "--test-fraction", "1.5", *OUT],
        ["test_fraction", "(0, 1)", "1.5"],
    ),
    CliCase(
        "cli-train-dataset-unknown",
        ["train", "--dataset", "imagenet", *OUT],
        ["--dataset", "'imagenet'", "'digits'"],
    ),
    CliCase(
        "cli-train-mnist-without-folder",
        ["train", "--dataset", "mnist", *OUT],
        ["mnist", "data_dir"],
    ),
    CliCase(
        "cli-train-mnist-missing-files",
        ["train", "--dataset", "mnist", "--data-dir", "{tmp}/none", *OUT],
        ["train-images-idx3-ubyte", "{tmp}/none"],
    ),
    CliCase(
        "cli-train-more-clients-per-round",
        ["train", "--clients", "4", "--clients-per-round", "10", "--device", "cpu", *OUT],
        ["clients_per_round", "4]", "Got 10"],
    ),
    CliCase(
        "cli-train-logreg-width",
        ["train", "--model", "logreg", "--width", "8", *OUT],
        ["model_options", "logreg", "width"],
    ),
    CliCase(
        "cli-train-out-is-a-file",
        ["train", "--out", "{tmp}/taken"],
        ["output folder", "{tmp}/taken"],
        _file("taken"),
    ),
    # sweep
    CliCase("cli-sweep-unknown-config", ["sweep", "nope", *OUT], ["'nope'", "quick_digits"]),
    CliCase(
        "cli-sweep-missing-toml",
        ["sweep", "{tmp}/gone.toml", *OUT],
        ["{tmp}/gone.toml", "does not exist"],
    ),
    CliCase(
        "cli-sweep-config-is-a-folder",
        ["sweep", "{tmp}/grid.toml", *OUT],
        ["{tmp}/grid.toml"],
        _folder("grid.toml"),
    ),
    CliCase(
        "cli-sweep-results-is-a-folder",
        ["sweep", "quick_digits", "--results", "{tmp}/store", *OUT],
        ["{tmp}/store"],
        _folder("store"),
    ),
    CliCase(
        "cli-sweep-bad-toml",
        ["sweep", "{tmp}/bad.toml", *OUT],
        ["{tmp}/bad.toml", "TOML"],
        _file("bad.toml", "name = \n"),
    ),
    CliCase(
        "cli-sweep-max-jobs-negative",
        ["sweep", "quick_digits", "--max-jobs", "-1", *OUT],
        ["--max-jobs", "[0, inf)", "-1"],
    ),
    # verify
    CliCase("cli-verify-unknown-claim", ["verify", "--claim", "huang.Z9", *OUT], ["huang.Z9"]),
    CliCase(
        "cli-verify-unknown-paper", ["verify", "--paper", "nature", *OUT], ["'paper'", "'nature'"]
    ),
    CliCase(
        "cli-verify-format", ["verify", "--format", "xml", *OUT], ["--format", "'xml'", "'table'"]
    ),
    CliCase("cli-verify-seed-not-integer", ["verify", "--seed", "0.5", *OUT], ["--seed", "'0.5'"]),
    # figures
    CliCase(
        "cli-figures-notebooks-is-a-file",
        ["figures", "--notebooks", "{tmp}/nb", *OUT],
        ["--notebooks", "{tmp}/nb"],
        _file("nb"),
    ),
    CliCase(
        "cli-figures-no-notebooks",
        ["figures", "--notebooks", "{tmp}/empty", *OUT],
        ["no notebooks", "{tmp}/empty"],
        _folder("empty"),
    ),
    CliCase(
        "cli-figures-scale", ["figures", "--scale", "huge", *OUT], ["--scale", "'huge'", "'quick'"]
    ),
    # leakage
    CliCase("cli-leakage-p-nan", ["leakage", "--p", "nan", *OUT], ["--p", "Got nan"]),
    CliCase(
        "cli-leakage-noise-inf",
        ["leakage", "--noise", "inf", *OUT],
        ["--noise", "[0, inf)", "Got inf"],
    ),
    CliCase(
        "cli-leakage-too-many-candidates",
        ["leakage", "--candidates", "5000", *OUT],
        ["candidates", "[2, 1797]", "5000"],
    ),
    CliCase(
        "cli-leakage-estimate-draws-negative",
        ["leakage", "--estimate-draws", "-5", *OUT],
        ["--estimate-draws", "[0, inf)", "-5"],
    ),
    CliCase(
        "cli-leakage-theorem1-samples-zero",
        ["leakage", "--theorem1-samples", "8", "0", *OUT],
        ["--theorem1-samples", "[1, inf)", "Got 0"],
    ),
    CliCase("cli-leakage-device", ["leakage", "--device", "tpu", *OUT], ["device", "'tpu'"]),
]
