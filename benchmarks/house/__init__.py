"""How the house is built: counts over the project's own source (``python -m benchmarks.house.census``)."""
