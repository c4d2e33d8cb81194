"""`python -m embedded_aws`: the same as `hypergov embedded-aws`."""

from embedded_aws.command import embedded_aws_command

if __name__ == "__main__":
    embedded_aws_command(prog_name="hypergov embedded-aws")
