"""Turning records into tables and figures: one number formatter, one progress bar, plots."""
