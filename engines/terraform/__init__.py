"""The terraform engine: captured Pulumi graphs executed by the real `terraform` binary."""
