"""hypergov: GitOps governance for shared Amazon SageMaker HyperPod GPU clusters."""

__version__ = "0.1.0"
