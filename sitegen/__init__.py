"""sitegen: evaluate saved diagnosis-agent traces, diff them against a baseline, publish a site."""

__version__ = "0.1.0"
