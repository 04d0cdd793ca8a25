"""Seed 000's research questions (RQ1-RQ3) and adaptive refinement, run on the embedded models."""
