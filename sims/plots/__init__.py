"""Figures: where they are saved and how the notebooks that draw them are run."""
