"""Attack-study sweeps: job schema, TOML configs, the resumable runner and its plots."""
