"""Direct drivers for cloud objects no Terraform provider has; shared by the Pulumi dynamic
providers and the terraform engine."""
