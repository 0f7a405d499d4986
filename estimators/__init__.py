"""Leakage measures: reconstruction metrics (NMI, PSNR, ...) and mutual-information estimators.

Units. Every mutual information and entropy here (``estimators.mi``, ``estimators.ksg``,
``estimators.neural``, the plug-in MI of ``estimators.nmi``) is in **nats**, the natural
unit of the estimators' formulas (digamma, log-sum-exp); the functions take no ``unit``.
Divide by ``math.log(2)`` to compare with ``bounds``, whose default unit is bits. NMI,
SSIM, pHash and SIFT similarity are unitless; PSNR is in decibels.
"""
