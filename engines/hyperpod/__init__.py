"""HyperPod task-governance objects (ComputeQuota, ClusterSchedulerConfig): the boto3 driver that
calls SageMaker and the executor that plans and applies them for the terraform engine."""
