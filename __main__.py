"""Pulumi program entry point (`pulumi up --stack <name>` runs it): see stacks/program.py."""

from stacks.program import main

main()
