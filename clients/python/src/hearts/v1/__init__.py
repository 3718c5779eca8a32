"""Generated Protobuf and gRPC code for hearts.v1; do not edit (scripts/generate.sh)."""
