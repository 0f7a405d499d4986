"""The packaged priprune_intervals sweep: every setting of Table 2 and of the p panel has
at least 3 seeds and 8 attacked targets, and Table 2's two arms share their seeds."""

from collections import defaultdict

from pruneleak.sims.sweep import packaged_config


def _settings(jobs):
    """The seeds of each setting (a job's fields but its seed)."""
    seeds = defaultdict(set)
    for job in jobs:
        fields = job.as_fields()
        seeds[tuple(sorted((k, repr(v)) for k, v in fields.items() if k != "seed"))].add(
            fields["seed"]
        )
    return seeds


def test_every_setting_has_three_seeds_and_eight_targets():
    config = packaged_config("priprune_intervals")
    panels = config.panels()
    assert set(panels) == {"table2", "p"}
    for name, jobs in panels.items():
        assert all(
            job.targets >= 8 and job.fed.clients_per_round == job.num_clients for job in jobs
        )
        assert all(len(seeds) >= 3 for seeds in _settings(jobs).values()), name
    table2 = panels["table2"]
    schemes = {job.pruning.scheme for job in table2}
    assert schemes == {"prunefl", "feddst", "synflow", "snip", "random"}
    for scheme in schemes:
        arms = {
            job.defense.name: {
                j.seed
                for j in table2
                if j.pruning.scheme == scheme and j.defense.name == job.defense.name
            }
            for job in table2
            if job.pruning.scheme == scheme
        }
        assert set(arms) == {"none", "priprune"} and arms["none"] == arms["priprune"]
    assert {job.pruning.p for job in panels["p"]} == {0.3, 0.6, 0.9}
