"""Attack-study sweeps: the job schema (:mod:`~sims.sweep.job`), grids of jobs
(:mod:`~sims.sweep.grid`), TOML and packaged configurations (:mod:`~sims.sweep.loading`),
the resumable runner (:mod:`~sims.sweep.runner`) with its local and Ray executors (Ray's
in :mod:`~sims.sweep.ray_executor`, which needs the optional ``ray`` extra) and reading
results by panel (:mod:`~sims.sweep.panels`). Figures are in :mod:`sims.plots.sweep`."""

from pruneleak.sims.sweep.grid import Resources, SweepConfig
from pruneleak.sims.sweep.job import AttackJob, DefenseSpec, ModelSpec, PruningSpec, job_key
from pruneleak.sims.sweep.loading import load_config, packaged_config, packaged_configs, read_config
from pruneleak.sims.sweep.runner import run_job, run_sweep, sweep_records

__all__ = [
    "AttackJob",
    "DefenseSpec",
    "ModelSpec",
    "PruningSpec",
    "Resources",
    "SweepConfig",
    "job_key",
    "load_config",
    "packaged_config",
    "packaged_configs",
    "read_config",
    "run_job",
    "run_sweep",
    "sweep_records",
]
