"""Provider adapters tested through the official SDKs against a protocol-checking local server."""
