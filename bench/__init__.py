"""On-demand benchmarks and the 100,000-example fuzz run (not collected by pytest)."""
