"""hearts_server: the stateless gRPC server."""
