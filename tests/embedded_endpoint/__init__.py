"""Tests of the embedded AWS endpoint (embedded_aws)."""
