"""components package."""
