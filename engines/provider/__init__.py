"""Terraform's AWS provider spoken to directly over its plugin protocol (issue 34, foundation).

`plugin` starts a provider binary as go-plugin does and connects to it (`tls_relay` speaks its
mutual TLS), `client` makes protocol 5's calls with typed values, `cty` encodes and decodes those
values (msgpack), `schema` holds the provider's schemas and terraform's proposed new state, and
`proto` the protocol's generated messages. No engine uses it yet (ARCHITECTURE.md says what the
provider engine still needs).
"""
