"""Bisca's benchmarks, each side by side with its anchor (run them with ``make bench``)."""
