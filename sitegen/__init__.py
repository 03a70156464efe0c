"""sitegen: evaluate saved diagnosis-agent traces, diff them against a baseline, publish a site."""

__version__ = "1.0.0"
