"""The pulumi engine (Automation API) and its dynamic provider for the HyperPod scheduler config."""
