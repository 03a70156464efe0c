"""`python -m sitegen` runs the command line."""

from sitegen.cli import main

main()
