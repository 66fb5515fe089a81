"""One module per experiment: plan the runs, execute them, return results as frames."""
