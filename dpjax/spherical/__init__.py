"""Optimal spherical mechanisms (spherical-kl-optimal-mechanisms)."""
