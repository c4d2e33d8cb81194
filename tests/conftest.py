"""Settings for the whole test suite.

Hypothesis' per-example deadline is a timing check; speed is measured in `benchmarks/`, never in
unit tests, and on a shared 2-core machine the first example of a test (which loads botocore's
models, say) can take longer than any deadline. So no test here has one."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("hypergov", deadline=None)
settings.load_profile("hypergov")
