"""Tests of the embedded AWS endpoint (hypergov.embedded_aws)."""
