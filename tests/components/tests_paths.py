"""Where the example tree lives, for the component tests."""

from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / "config"
