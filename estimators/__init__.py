"""Leakage measures: reconstruction metrics (NMI, PSNR, ...) and mutual-information estimators."""
