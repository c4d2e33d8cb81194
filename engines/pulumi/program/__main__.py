"""Pulumi program entry point (`pulumi up --stack <name>` runs it): see stacks/program.py. It sits
above every layer: it hands the program the engine's dynamic provider for the scheduler config."""

from engines.pulumi.scheduler_config_provider import SchedulerConfigProvider
from stacks.program import main

main(SchedulerConfigProvider())
