"""What is shown from trained runs and results files: the results README, error kinds, plots."""
