"""Engines: how a stack's declared state becomes live state. The engine contract (Protocol, plan and
outcome types, scheduling), the terraform and Pulumi engines, and the AWS and Kubernetes drivers they
run (SageMaker HyperPod task governance, EKS access, Kubernetes objects)."""
