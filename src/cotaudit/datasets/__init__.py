"""Datasets: GSM8K (vendored, local or hub) and the small sets shipped for the probe."""
