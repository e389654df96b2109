"""`python -m planner ...` runs the CLI, as the `planner` script does."""

from planner.cli import main

main()
